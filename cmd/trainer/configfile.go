package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/stpis/stpis/internal/safefile"
	"github.com/stpis/stpis/train"
)

// maxConfigFile bounds a --config file's size.
const maxConfigFile = 1 << 20

// readConfigFile reads a --config file: a YAML mapping of setting names
// (the train flags' names, and env, method, step, preset) to values, as
// `trainer config` writes it, or a run's run.json (see runFileSettings).
// The settings come back in the file's order.
func readConfigFile(path string) ([]setting, error) {
	// A regular file only (a FIFO is refused, not waited on), read to at
	// most one byte past the limit.
	b, err := safefile.Read(path, maxConfigFile)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		return runFileSettings(path, b)
	}
	var doc, more yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("--config %s: %w", path, err)
	}
	// A second document (after ---) would be ignored: refused instead
	// (an empty one is nothing).
	for {
		err := dec.Decode(&more)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("--config %s: after the first document: %w", path, err)
		}
		if empty := len(more.Content) == 0 || (len(more.Content) == 1 && more.Content[0].Tag == "!!null" && more.Content[0].Value == ""); !empty {
			return nil, fmt.Errorf("--config %s: line %d: a second YAML document (after ---); want one mapping of setting names to values", path, more.Line)
		}
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("--config %s: want a mapping of setting names to values (trainer config writes one)", path)
	}
	m := doc.Content[0]
	var out []setting
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		switch {
		case k.Kind != yaml.ScalarNode:
			return nil, fmt.Errorf("--config %s: line %d: a setting's name must be a plain word", path, k.Line)
		case v.Kind != yaml.ScalarNode:
			return nil, fmt.Errorf("--config %s: line %d: %s: want a single value", path, v.Line, k.Value)
		case seen[k.Value]:
			return nil, fmt.Errorf("--config %s: line %d: %s is given twice", path, k.Line, k.Value)
		}
		seen[k.Value] = true
		out = append(out, setting{k.Value, v.Value})
	}
	return out, nil
}

// runFileSettings reads a run's run.json as a --config file: the settings
// the run ran with (the same ones trainer config prints), its seed and its
// env's kwargs. Every form of run.json reads (train.ReadRunConfig): one
// without a schema number is told by its shape. So `trainer train --config RUN/run.json` repeats the run
// bit for bit, and `--seed 2` repeats it on seed 2.
func runFileSettings(path string, b []byte) ([]setting, error) {
	var rf struct {
		Schema int             `json:"schema"`
		Config json.RawMessage `json:"config"`
	}
	if err := json.Unmarshal(b, &rf); err != nil {
		return nil, fmt.Errorf("--config %s: %w", path, err)
	}
	if len(rf.Config) == 0 || string(rf.Config) == "null" {
		return nil, fmt.Errorf("--config %s: a JSON file must be a run's run.json, with its config (this one has none)", path)
	}
	c, err := train.ReadRunConfig(rf.Schema, rf.Config)
	if err != nil {
		return nil, fmt.Errorf("--config %s: %w", path, err)
	}
	out := []setting{{"env", c.Problem.Env}, {"preset", c.Preset}, {"method", c.MethodName()}}
	if st := c.Step(); st != "" {
		out = append(out, setting{"step", string(st)})
	}
	for _, s := range c.Settings() {
		if s.Fixed == "" {
			out = append(out, setting{s.Name, s.Value})
		}
	}
	out = append(out, setting{"seed", strconv.FormatUint(c.Problem.Seed, 10)})
	keys := make([]string, 0, len(c.Problem.Kwargs))
	for k := range c.Problem.Kwargs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		out = append(out, setting{"kwarg", fmt.Sprintf("%s=%v", k, c.Problem.Kwargs[k])})
	}
	return out, nil
}
