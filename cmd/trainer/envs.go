package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/stpis/stpis/tasks"
	"github.com/stpis/stpis/train"
)

// runEnvs is `trainer envs`: the task table, which the trainer knows
// without a bridge, and with --bridge or --local the other gymnasium ids a
// bridge can make.
func runEnvs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var bf bridgeFlags
	fs := newFlagSet("trainer envs")
	bf.register(fs)
	fs.Lookup("bridge").Usage = "a running bridge (host:port,host:port or dns:///host:port) to list the other gymnasium ids it can make; empty: the task table alone"
	local := fs.Bool("local", false, "start a local bridge from .venv and list the other gymnasium ids it can make (--bridge asks a running one)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	switch {
	case fs.NArg() > 0:
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	case *local && bf.bridge != "":
		return usageError{errors.New("flags --local and --bridge exclude each other: --local starts a bridge, --bridge names a running one")}
	case set["workers"] && !*local:
		return usageError{errors.New("flag --workers sizes the bridge that --local starts: give --local too")}
	case set["bridge-timeout"] && !*local && bf.bridge == "":
		return usageError{errors.New("flag --bridge-timeout needs a bridge: give --local or --bridge")}
	}
	if err := bf.check(); err != nil {
		return usageError{err}
	}
	if err := writeTaskTable(stdout); err != nil {
		return err
	}
	if !*local && bf.bridge == "" {
		_, err := fmt.Fprintf(stdout, "\nAny other gymnasium env with Box spaces trains too, on the fallback settings (no threshold;\n"+
			"%[1]s config --env ID shows them), as a registered id or module:EnvId. The ids a bridge\n"+
			"can make: %[1]s envs --local (starts one) or %[1]s envs --bridge ADDR.\n", self())
		return err
	}
	log, err := newLogger(stderr, bf.logLevel)
	if err != nil {
		return err
	}
	client, closeBridge, err := connect(ctx, bf, log)
	if err != nil {
		return err
	}
	defer closeBridge()
	list, err := client.ListEnvs(ctx)
	if err != nil {
		return fmt.Errorf("envs: %w", err)
	}
	others := otherEnvIDs(list.EnvIDs, list.Aliases)
	fmt.Fprintf(stdout, "\nThe bridge also makes these %d gymnasium ids (a task's other versions take its settings, the rest the fallback's, without a threshold):\n", len(others))
	return writeWrapped(stdout, others, 80)
}

// writeTaskTable prints the task table: the paper's name, the gymnasium
// id it runs as, its sizes, threshold, budget and the default's method.
func writeTaskTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "task\tgymnasium\tobs\tact\tthreshold\tdefault method (trainer config --env TASK)")
	for _, t := range tasks.All() {
		env := tasks.PaperEnv(t.Name)
		thr := "none"
		if t.HasThreshold {
			thr = fmt.Sprintf("%g", t.Threshold)
		}
		method := "?"
		if c, err := train.Preset(train.PresetTuned, "", "", env); err == nil {
			method = c.Named().Label
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", env, tasks.GymnasiumEnv(t.Name), t.ObsDim, t.ActDim, thr, method)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("envs: write the task table: %w", err)
	}
	_, err := fmt.Fprintf(w, "A paper name (-%s) runs as gymnasium's -%s; any other version of a task's id (Hopper-v4) runs as given, with the task's settings.\n",
		tasks.PaperVersion, tasks.GymnasiumVersion)
	return err
}

// otherEnvIDs are the ids of a bridge's list that the task table does not
// show: neither a paper alias nor the gymnasium id of one, sorted.
func otherEnvIDs(ids []string, aliases map[string]string) []string {
	shown := map[string]bool{}
	for _, t := range tasks.All() {
		shown[tasks.PaperEnv(t.Name)], shown[tasks.GymnasiumEnv(t.Name)] = true, true
	}
	var out []string
	for _, id := range ids {
		if _, alias := aliases[id]; !alias && !shown[id] {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// writeWrapped prints words separated by ", " in lines of at most width
// characters (a word longer than width gets a line of its own).
func writeWrapped(w io.Writer, words []string, width int) error {
	var line strings.Builder
	flush := func() error {
		if line.Len() == 0 {
			return nil
		}
		_, err := fmt.Fprintln(w, line.String())
		line.Reset()
		return err
	}
	for i, word := range words {
		if i < len(words)-1 {
			word += ","
		}
		if line.Len() > 0 && line.Len()+1+len(word) > width {
			if err := flush(); err != nil {
				return err
			}
		}
		if line.Len() > 0 {
			line.WriteByte(' ')
		}
		line.WriteString(word)
	}
	return flush()
}
