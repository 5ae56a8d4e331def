package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/stpis/stpis/tasks"
)

// runConfig is the config subcommand: the complete settings a run would
// start with, as a YAML file that --config reads back.
func runConfig(args []string, stdout, stderr io.Writer) error {
	var sel selection
	fs := newFlagSet("trainer config")
	sel.register(fs)
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	case sel.env == "" && sel.configFile == "":
		return usageError{errors.New("flag --env is required (for example --env Hopper-v1)")}
	}
	c, err := sel.resolve(nil)
	if err != nil {
		return err
	}
	if err := c.Validate(); err != nil {
		return usageError{err}
	}
	warnUnknownTask(stderr, c.Problem.Env)
	fmt.Fprintf(stdout, "# trainer train --config FILE runs with these settings; flags override them.\n")
	fmt.Fprintf(stdout, "# %s\n", c.Named().Label)
	fmt.Fprintf(stdout, "env: %s\npreset: %s\nmethod: %s\n", yamlScalar(c.Problem.Env), c.Preset, c.MethodName())
	if st := c.Step(); st != "" {
		fmt.Fprintf(stdout, "step: %s\n", st)
	}
	for _, s := range c.Settings() {
		line := fmt.Sprintf("%s: %s", s.Name, yamlScalar(s.Value))
		if s.Fixed != "" {
			line += "  # fixed: " + s.Fixed
		}
		fmt.Fprintln(stdout, line)
	}
	return nil
}

// warnUnknownTask says on w when env is not one of the task table's, so
// that its settings are the table's fallback, and names the task it is a
// near miss of.
func warnUnknownTask(w io.Writer, env string) {
	if _, ok := tasks.Lookup(env); ok {
		if s := misspeltTask(env); s != "" {
			// A task's name without its version: the task's settings, but
			// no gymnasium env of that name.
			fmt.Fprintf(w, "warning: no gymnasium env is named %s, and training refuses it: did you mean %s?\n", env, s)
		}
		return
	}
	msg := fmt.Sprintf("warning: %s is not a task of the table (train/presets.yaml): these are its fallback settings (no threshold, the fallback budget)", env)
	if s := misspeltTask(env); s != "" {
		msg += fmt.Sprintf("; did you mean %s?", s)
	}
	fmt.Fprintln(w, msg)
}

// yamlScalar quotes v where YAML would read it as something else.
func yamlScalar(v string) string {
	if v == "" || strings.ContainsAny(v, ":#{}[],&*!|>'\"%@`") || strings.TrimSpace(v) != v {
		return fmt.Sprintf("%q", v)
	}
	return v
}
