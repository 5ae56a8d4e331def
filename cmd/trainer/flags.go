package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stpis/stpis/envclient"
	"github.com/stpis/stpis/train"
)

// usageError marks errors in the command line (exit code 2).
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

// parseFlags parses args into fs. A bad flag gives one error line (the
// caller prints it with a hint to run -h), not the whole usage; -h prints
// the usage.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stderr)
		fmt.Fprintf(stderr, "usage of %s:\n", fs.Name())
		fs.PrintDefaults()
		return err
	}
	if err != nil {
		return usageError{err}
	}
	return nil
}

// parseInterspersed parses flags that may come after positional arguments
// (trainer plot runs/ -o curve.png) and returns the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string, stderr io.Writer) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args, stderr); err != nil {
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
	bridge               string
	timeout              time.Duration
	reconnect, attempt   time.Duration
	tlsCA, tlsServerName string
	workers              int
	logLevel             string
}

func (b *bridgeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&b.bridge, "bridge", "", "bridge address list (host:port,host:port) or dns:///host:port; empty starts a local bridge from .venv (make bridge runs one on 127.0.0.1:50051)")
	fs.DurationVar(&b.timeout, "bridge-timeout", 60*time.Second, "how long to wait for the bridge to answer at start")
	fs.DurationVar(&b.reconnect, "reconnect-timeout", 2*time.Minute, "how long a batch keeps being re-sent while the bridge is unreachable (a restart) before the run gives up; --resume continues it")
	fs.DurationVar(&b.attempt, "attempt-timeout", 0, "deadline of one attempt of a chunk before it is sent to another replica (0: derived from the chunk's steps)")
	fs.StringVar(&b.tlsCA, "bridge-tls-ca", "", "PEM file of the CA that signs the bridge's certificate: connect with TLS (empty: plaintext)")
	fs.StringVar(&b.tlsServerName, "bridge-tls-server-name", "", "name the bridge's certificate must hold (empty: the target's host)")
	fs.IntVar(&b.workers, "workers", 0, "worker processes of a local bridge (0: one per core)")
	fs.StringVar(&b.logLevel, "log-level", "info", "log level: trace, debug, info, warn, error")
}

// kFlag is --k: auto (0, the preset's), paper, or a positive count.
type kFlag struct {
	v     int
	paper bool
}

func (k *kFlag) String() string {
	switch {
	case k == nil || (k.v == 0 && !k.paper):
		return ""
	case k.paper:
		return "paper"
	}
	return strconv.Itoa(k.v)
}

func (k *kFlag) Set(s string) error {
	switch s {
	case "auto", "0":
		*k = kFlag{}
		return nil
	case "paper":
		*k = kFlag{paper: true}
		return nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 || v > 10000 {
		return errors.New("want a count in [1, 10000], paper or auto")
	}
	*k = kFlag{v: v}
	return nil
}

// optFloat is a float flag that is unset (the preset's value) until given,
// and may be "none".
type optFloat struct {
	v        float64
	set      bool
	none     bool
	allowNon bool
}

func (o *optFloat) String() string {
	switch {
	case o == nil || !o.set:
		return ""
	case o.none:
		return "none"
	}
	return strconv.FormatFloat(o.v, 'g', -1, 64)
}

func (o *optFloat) Set(s string) error {
	if s == "none" && o.allowNon {
		*o = optFloat{set: true, none: true, allowNon: true}
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		if o.allowNon {
			return errors.New("want a finite number or none")
		}
		return errors.New("want a finite number")
	}
	*o = optFloat{v: v, set: true, allowNon: o.allowNon}
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

// seedsFlag is --common-seeds: a sharing (none, iteration, pair), or, given
// alone, iteration (the flag was a switch).
type seedsFlag struct{ v train.Seeds }

func (f *seedsFlag) String() string {
	if f == nil {
		return ""
	}
	return f.v.String()
}

func (f *seedsFlag) Set(s string) error {
	v, err := train.ParseSeeds(s)
	if err != nil {
		return errors.New("want none, iteration or pair")
	}
	f.v = v
	return nil
}

// IsBoolFlag lets --common-seeds stand alone (meaning iteration).
func (*seedsFlag) IsBoolFlag() bool { return true }
