// Command matrix expands an experiment matrix file (bench/matrices/*.yaml:
// tasks with their budgets, methods with their trainer flags, seeds, the
// evaluation spacing) into the runs that bench/rl.sh starts, one line
// each, in the spirit of RL Zoo's `-conf` hyperparameter files: an
// experiment is a file, not shell code.
//
//	go run ./bench/matrix [-tasks "A B"] [-methods "m n"] [-seeds 1-5] [-budget N] [-out DIR] FILE
//
// prints tab-separated lines:
//
//	out        DIR                      where the runs go (DIR/runs)
//	plot       default,ars,paper        the plots' --methods
//	run        TASK METHOD SEED ARGS…   one trainer run: its whole argument list
//	done       TASK success|nosuccess   the task's runs are all listed (and
//	                                    whether it has a threshold to plot)
//
// The flags narrow or override the file (bench/rl.sh passes TASKS,
// METHODS, SEEDS, BUDGET and OUT): a task the file does not list needs
// -budget, and runs every selected method.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/stpis/stpis/tasks"
)

// Matrix is a matrix file.
type Matrix struct {
	// Out is the directory the runs go under (Out/runs).
	Out string `yaml:"out"`
	// Seeds are the seeds of a task that lists no runs ("1-10", "101 102").
	Seeds string `yaml:"seeds"`
	// EvalSpacing is --eval-spacing, in training episodes.
	EvalSpacing int `yaml:"eval-spacing"`
	// Plot is the plots' --methods.
	Plot string `yaml:"plot"`
	// Methods are the method names with their trainer flags, in run order.
	Methods []Method `yaml:"methods"`
	// Tasks are the tasks, in run order.
	Tasks []Task `yaml:"tasks"`
}

// Method is a named list of trainer flags.
type Method struct {
	Name string   `yaml:"name"`
	Args []string `yaml:"args"`
}

// Task is one env of the matrix.
type Task struct {
	Env    string `yaml:"task"`
	Budget int    `yaml:"budget"`
	// Runs are the seeds of each method that runs on this task ("1-20");
	// none: every method on the matrix's seeds.
	Runs map[string]string `yaml:"runs"`
	// Args replace a method's flags on this task.
	Args map[string][]string `yaml:"args"`
	// Fallback marks an env the task table does not name, on purpose: its
	// runs take the fallback settings ("*" in train/presets.yaml). Without
	// it such an env is refused, as a misspelt task would be.
	Fallback bool `yaml:"fallback"`
}

// Run is one trainer run of a matrix.
type Run struct {
	Env, Method string
	Seed        uint64
	Args        []string
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "matrix:", err)
		os.Exit(2)
	}
}

// overrides are the flags that narrow or override a matrix file.
type overrides struct {
	tasks, methods, seeds, out string
	budget                     int
}

func run(args []string, stdout io.Writer) error {
	var o overrides
	fs := flag.NewFlagSet("matrix", flag.ContinueOnError)
	fs.StringVar(&o.tasks, "tasks", "", "only these tasks (space-separated), in this order")
	fs.StringVar(&o.methods, "methods", "", "only these methods (space-separated)")
	fs.StringVar(&o.seeds, "seeds", "", "these seeds for every run (1-10, or 101 102)")
	fs.IntVar(&o.budget, "budget", 0, "this budget for every task (needed for a task the file does not list)")
	fs.StringVar(&o.out, "out", "", "this output directory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("want one matrix file")
	}
	m, err := Load(fs.Arg(0))
	if err != nil {
		return err
	}
	return m.write(stdout, o)
}

// Load reads and checks a matrix file.
func Load(path string) (*Matrix, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m Matrix
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &m, nil
}

func (m *Matrix) check() error {
	switch {
	case m.Out == "":
		return errors.New("out: the directory the runs go under is required")
	case m.EvalSpacing < 0:
		return fmt.Errorf("eval-spacing: %d must be ≥ 0", m.EvalSpacing)
	case len(m.Methods) == 0 || len(m.Tasks) == 0:
		return errors.New("methods and tasks: want at least one of each")
	}
	if _, err := ParseSeeds(m.Seeds); err != nil && m.Seeds != "" {
		return fmt.Errorf("seeds: %w", err)
	}
	seen := map[string]bool{}
	for _, me := range m.Methods {
		if me.Name == "" || seen[me.Name] {
			return fmt.Errorf("methods: %q: want a name given once", me.Name)
		}
		if err := plainArgs(me.Args); err != nil {
			return fmt.Errorf("methods: %s: %w", me.Name, err)
		}
		seen[me.Name] = true
	}
	envs := map[string]bool{}
	for _, t := range m.Tasks {
		switch _, ok := tasks.Lookup(t.Env); {
		case !ok && !t.Fallback:
			return fmt.Errorf("tasks: %q is not a task of package tasks (fallback: true runs an env outside the table)", t.Env)
		case ok && t.Fallback:
			return fmt.Errorf("tasks: %s: fallback: true, but it is a task of package tasks", t.Env)
		}
		if envs[t.Env] || t.Budget < 1 {
			return fmt.Errorf("tasks: %s: want it once, with a budget ≥ 1", t.Env)
		}
		envs[t.Env] = true
		if len(t.Runs) == 0 && m.Seeds == "" {
			return fmt.Errorf("tasks: %s: no runs, and the matrix has no seeds", t.Env)
		}
		for name, s := range t.Runs {
			if !seen[name] {
				return fmt.Errorf("tasks: %s: runs: %q is not one of the methods", t.Env, name)
			}
			if _, err := ParseSeeds(s); err != nil {
				return fmt.Errorf("tasks: %s: runs: %s: %w", t.Env, name, err)
			}
		}
		for name, args := range t.Args {
			if !seen[name] {
				return fmt.Errorf("tasks: %s: args: %q is not one of the methods", t.Env, name)
			}
			if err := plainArgs(args); err != nil {
				return fmt.Errorf("tasks: %s: args: %s: %w", t.Env, name, err)
			}
		}
	}
	return nil
}

// plainArgs refuses an argument the output's tab-separated lines cannot
// carry.
func plainArgs(args []string) error {
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, "\t\n") {
			return fmt.Errorf("%q: an argument must be non-empty, without tabs or newlines", a)
		}
	}
	return nil
}

// ParseSeeds reads seeds: ranges FIRST-LAST and single seeds, separated
// by spaces or commas.
func ParseSeeds(v string) ([]uint64, error) {
	var out []uint64
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == ',' || r == '\n' || r == '\t' }) {
		a, b, isRange := strings.Cut(f, "-")
		first, err1 := strconv.ParseUint(a, 10, 64)
		last, err2 := first, error(nil)
		if isRange {
			last, err2 = strconv.ParseUint(b, 10, 64)
		}
		if err1 != nil || err2 != nil || last < first || last-first >= 10000 {
			return nil, fmt.Errorf("%q: want seeds (3) and ranges FIRST-LAST (1-10)", f)
		}
		for s := first; s <= last; s++ {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no seeds")
	}
	return out, nil
}

// Runs lists the runs the matrix makes under o, task by task, each
// task's runs by method, then seed.
func (m *Matrix) Runs(o overrides) ([]Run, error) {
	selected := m.Tasks
	if o.tasks != "" {
		selected = nil
		for _, env := range strings.Fields(o.tasks) {
			i := slices.IndexFunc(m.Tasks, func(t Task) bool { return t.Env == env })
			switch {
			case i >= 0:
				selected = append(selected, m.Tasks[i])
			case o.budget == 0:
				return nil, fmt.Errorf("%s is not in the matrix: give its budget (BUDGET)", env)
			default:
				selected = append(selected, Task{Env: env})
			}
		}
	}
	methods := m.Methods
	if o.methods != "" {
		methods = nil
		for _, name := range strings.Fields(o.methods) {
			i := slices.IndexFunc(m.Methods, func(me Method) bool { return me.Name == name })
			if i < 0 {
				return nil, fmt.Errorf("method %q is not in the matrix (%s)", name, m.methodNames())
			}
			methods = append(methods, m.Methods[i])
		}
	}
	var seeds []uint64
	if o.seeds != "" {
		var err error
		if seeds, err = ParseSeeds(o.seeds); err != nil {
			return nil, fmt.Errorf("seeds: %w", err)
		}
	}
	var runs []Run
	for _, t := range selected {
		budget := t.Budget
		if o.budget > 0 {
			budget = o.budget
		}
		for _, me := range methods {
			spec, listed := t.Runs[me.Name]
			if len(t.Runs) == 0 {
				spec, listed = m.Seeds, true
			}
			if !listed && o.methods == "" {
				continue // the task does not run this method
			}
			if !listed {
				spec = m.Seeds
			}
			ss := seeds
			if ss == nil {
				var err error
				if ss, err = ParseSeeds(spec); err != nil {
					return nil, fmt.Errorf("%s %s: seeds: %w", t.Env, me.Name, err)
				}
			}
			args := me.Args
			if a, ok := t.Args[me.Name]; ok {
				args = a
			}
			for _, s := range ss {
				line := append([]string{"--env", t.Env}, args...)
				line = append(line, "--seed", strconv.FormatUint(s, 10), "--max-episodes", strconv.Itoa(budget))
				if m.EvalSpacing > 0 {
					line = append(line, "--eval-spacing", strconv.Itoa(m.EvalSpacing))
				}
				line = append(line, "--continue-after-threshold")
				runs = append(runs, Run{Env: t.Env, Method: me.Name, Seed: s, Args: line})
			}
		}
	}
	return runs, nil
}

func (m *Matrix) methodNames() string {
	var names []string
	for _, me := range m.Methods {
		names = append(names, me.Name)
	}
	return strings.Join(names, ", ")
}

func (m *Matrix) write(w io.Writer, o overrides) error {
	runs, err := m.Runs(o)
	if err != nil {
		return err
	}
	out := m.Out
	if o.out != "" {
		out = o.out
	}
	plot := m.Plot
	if plot == "" {
		plot = strings.ReplaceAll(m.methodNames(), ", ", ",")
	}
	fmt.Fprintf(w, "out\t%s\nplot\t%s\n", out, plot)
	for i, r := range runs {
		fmt.Fprintf(w, "run\t%s\t%s\t%d\t%s\n", r.Env, r.Method, r.Seed, strings.Join(r.Args, "\t"))
		if i == len(runs)-1 || runs[i+1].Env != r.Env {
			// A task without a threshold has no success plot.
			success := "success"
			if t, ok := tasks.Lookup(r.Env); !ok || !t.HasThreshold {
				success = "nosuccess"
			}
			fmt.Fprintf(w, "done\t%s\t%s\n", r.Env, success)
		}
	}
	return nil
}
