package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stpis/stpis/envclient"
)

// usageError marks errors in the command line (exit code 2).
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

// newFlagSet returns a flag set whose usage lists its flags as --flag.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() { groupedUsage(fs, nil) }
	return fs
}

// parseFlags parses args into fs. A bad flag gives one error line (the
// caller prints it with a hint to run -h), naming flags as --flag and
// suggesting the flag meant; -h prints the usage on stdout.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		fs.Usage()
		return err
	}
	if err != nil {
		return usageError{flagError(fs, err)}
	}
	return nil
}

// flagError rewrites the flag package's errors with two dashes, and adds
// the nearest defined flag to "flag provided but not defined".
func flagError(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		name = strings.TrimLeft(name, "-")
		var names []string
		fs.VisitAll(func(fl *flag.Flag) { names = append(names, fl.Name) })
		msg = "unknown flag --" + name
		if s := suggest(name, names); s != "" {
			msg += ": did you mean --" + s + "?"
		}
		return errors.New(msg)
	}
	return errors.New(dashes(msg))
}

// dashes writes "flag -x" as "flag --x" in the flag package's messages.
func dashes(msg string) string {
	for _, p := range []string{"flag -", "flag: -", "argument: -"} {
		msg = strings.ReplaceAll(msg, p, p+"-")
	}
	return msg
}

// parseInterspersed parses flags that may come after positional arguments
// (trainer plot runs/ -o curve.png) and returns the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args, stdout); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// bridgeFlags are the flags of every subcommand that talks to a bridge.
type bridgeFlags struct {
	bridge    string
	timeout   time.Duration
	reconnect time.Duration
	tls       tlsFlag
	workers   int
	logLevel  string
	// envModules are passed to a local bridge as --env-module: the module
	// of the env named as module:EnvId.
	envModules []string
}

func (b *bridgeFlags) register(fs *flag.FlagSet) {
	b.timeout, b.reconnect = 2*time.Minute, 2*time.Minute
	fs.StringVar(&b.bridge, "bridge", "", "bridge address list (host:port,host:port) or dns:///host:port; empty starts a local bridge from .venv (make bridge runs one on 127.0.0.1:50051)")
	fs.Func("bridge-timeout", "how long to wait for an unreachable bridge, at start and while a batch is re-sent during a run (a bridge restart) before giving up; --resume continues a run given up (default 2m0s)", func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return errors.New("want a positive duration (90s, 2m)")
		}
		b.timeout, b.reconnect = d, d
		return nil
	})
	fs.Var(&b.tls, "bridge-tls", "TLS to a running bridge (empty: plaintext): ca=FILE, the PEM of the CA that signs the bridge's certificate; then optionally name=NAME, the name that certificate must hold (default: the target's host), and cert=FILE,key=FILE, a client certificate for a bridge that requires one (its --tls-client-ca)")
	fs.Func("workers", fmt.Sprintf("`count` of worker processes of a local bridge, at most %d a core (0: one per core)", workersPerCore), b.setWorkers)
	fs.StringVar(&b.logLevel, "log-level", "info", "log level: trace, debug, info, warn, error")
}

// check refuses bridge flags that would be ignored: TLS names how to
// reach a running bridge (--bridge); a local bridge is plaintext on
// loopback.
func (b *bridgeFlags) check() error {
	if b.tls.CA != "" && b.bridge == "" {
		return errors.New("flag --bridge-tls needs --bridge (a running bridge's address): the local bridge the trainer starts is plaintext on loopback")
	}
	if b.bridge != "" {
		// A malformed address is refused at once, not dialled for
		// --bridge-timeout.
		if err := envclient.CheckTarget(b.bridge); err != nil {
			return fmt.Errorf("invalid value for flag --bridge: %w", err)
		}
	}
	for _, f := range [][2]string{{"ca", b.tls.CA}, {"cert", b.tls.Cert}, {"key", b.tls.Key}} {
		if f[1] == "" {
			continue
		}
		if _, err := os.Stat(f[1]); errors.Is(err, os.ErrNotExist) {
			// A missing file is a bad command line; one that is there but
			// bad fails when it is read (exit 1).
			return fmt.Errorf("flag --bridge-tls: %s=%s: %w", f[0], f[1], err)
		}
	}
	return nil
}

// tlsFlag is --bridge-tls ca=FILE[,name=NAME][,cert=FILE,key=FILE].
type tlsFlag struct{ CA, Name, Cert, Key string }

func (t *tlsFlag) String() string {
	if t == nil || t.CA == "" {
		return ""
	}
	s := "ca=" + t.CA
	for _, kv := range [][2]string{{"name", t.Name}, {"cert", t.Cert}, {"key", t.Key}} {
		if kv[1] != "" {
			s += "," + kv[0] + "=" + kv[1]
		}
	}
	return s
}

func (t *tlsFlag) Set(v string) error {
	var out tlsFlag
	fields := map[string]*string{"ca": &out.CA, "name": &out.Name, "cert": &out.Cert, "key": &out.Key}
	for _, part := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(part, "=")
		p := fields[k]
		switch {
		case !ok || p == nil:
			return fmt.Errorf("want ca=FILE[,name=NAME][,cert=FILE,key=FILE], got %q", part)
		case *p != "":
			return fmt.Errorf("%s is given twice", k)
		case val == "":
			return fmt.Errorf("%s is empty", k)
		}
		*p = val
	}
	switch {
	case out.CA == "":
		return errors.New("ca=FILE is required: without the CA that signs the bridge's certificate no name is checked and no certificate sent")
	case (out.Cert == "") != (out.Key == ""):
		return errors.New("cert= and key= go together: give both or neither")
	}
	*t = out
	return nil
}

// workersPerCore bounds --workers, as the bridge bounds its own --workers
// (it counts every online core, this only the cores the trainer may run
// on, so the bridge accepts whatever passes here, memory permitting).
const workersPerCore = 4

// setWorkers parses --workers: 0 (one per core), or a count of at most
// workersPerCore a core. A count beyond it would start processes until
// memory ran out.
func (b *bridgeFlags) setWorkers(v string) error {
	n, err := strconv.Atoi(v)
	cores := runtime.NumCPU()
	limit := workersPerCore * cores
	switch {
	case err != nil:
		return errors.New("want a whole number of worker processes")
	case n < 0 || n > limit:
		return fmt.Errorf("want 0 (one per core) or 1 to the limit %d (%d a core on %d cores), got %d", limit, workersPerCore, cores, n)
	}
	b.workers = n
	return nil
}

// kwargsFlag collects repeated --kwarg KEY=VALUE.
type kwargsFlag struct{ kw envclient.Kwargs }

func (k *kwargsFlag) String() string {
	if k == nil || len(k.kw) == 0 {
		return ""
	}
	var parts []string
	for key, v := range k.kw {
		parts = append(parts, fmt.Sprintf("%s=%v", key, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func (k *kwargsFlag) Set(s string) error {
	key, val, ok := strings.Cut(s, "=")
	if !ok || key == "" {
		return fmt.Errorf("want KEY=VALUE, got %q", s)
	}
	if k.kw == nil {
		k.kw = envclient.Kwargs{}
	}
	if _, dup := k.kw[key]; dup {
		return fmt.Errorf("%s is given twice", key)
	}
	switch strings.ToLower(val) {
	case "true":
		k.kw[key] = true
		return nil
	case "false":
		k.kw[key] = false
		return nil
	}
	if i, err := strconv.ParseInt(val, 10, 64); err == nil {
		k.kw[key] = i
		return nil
	}
	if f, err := strconv.ParseFloat(val, 64); err == nil {
		k.kw[key] = f
		return nil
	}
	k.kw[key] = val
	return nil
}

// groupedUsage prints the flags of fs by group, each with its usage and
// default; a flag in no group is listed last, so none is hidden. With no
// groups, every flag is listed under "flags".
func groupedUsage(fs *flag.FlagSet, groups []struct {
	title string
	flags []string
}) {
	w := fs.Output()
	fmt.Fprintf(w, "usage of %s:\n", fs.Name())
	listed := map[string]bool{}
	print := func(fl *flag.Flag) {
		listed[fl.Name] = true
		name, usage := flag.UnquoteUsage(fl)
		fmt.Fprintf(w, "  --%s %s\n    \t%s", fl.Name, name, strings.ReplaceAll(usage, "\n", "\n    \t"))
		if fl.DefValue != "" && fl.DefValue != "0" && fl.DefValue != "false" {
			fmt.Fprintf(w, " (default %s)", fl.DefValue)
		}
		fmt.Fprintln(w)
	}
	for _, g := range groups {
		fmt.Fprintf(w, "\n%s:\n", g.title)
		for _, name := range g.flags {
			if fl := fs.Lookup(name); fl != nil {
				print(fl)
			}
		}
	}
	first, title := true, "Other"
	if len(groups) == 0 {
		title = "flags"
	}
	fs.VisitAll(func(fl *flag.Flag) {
		if !listed[fl.Name] {
			if first {
				fmt.Fprintf(w, "\n%s:\n", title)
				first = false
			}
			print(fl)
		}
	})
}
