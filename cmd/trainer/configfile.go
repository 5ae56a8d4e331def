package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"go.yaml.in/yaml/v3"
)

// maxConfigFile bounds a --config file's size.
const maxConfigFile = 1 << 20

// readConfigFile reads a --config file: a YAML mapping of setting names
// (the train flags' names, and env, method, step, preset) to values, as
// `trainer config` writes it. The settings come back in the file's order.
func readConfigFile(path string) ([]setting, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	defer f.Close()
	// Read at most one byte past the limit: a file without end
	// (/dev/zero) is refused there instead of filling memory.
	b, err := io.ReadAll(io.LimitReader(f, maxConfigFile+1))
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	if len(b) > maxConfigFile {
		return nil, fmt.Errorf("--config %s: over the limit of %d bytes", path, maxConfigFile)
	}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&doc); err != nil {
		return nil, fmt.Errorf("--config %s: %w", path, err)
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
