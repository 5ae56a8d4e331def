package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/stpis/stpis/envclient"
	"github.com/stpis/stpis/envclient/localbridge"
)

// envModule returns the module of a module:EnvId env id (gymnasium's form
// for an env that importing a module registers), or nil.
func envModule(env string) []string {
	if m, _, ok := strings.Cut(env, ":"); ok && m != "" {
		return []string{m}
	}
	return nil
}

// connect dials the bridge named by the flags, or starts a local one from
// .venv when none is named. The returned func closes the client and stops a
// local bridge.
func connect(ctx context.Context, bf bridgeFlags, log zerolog.Logger) (*envclient.Client, func(), error) {
	var local *supervisor
	target, workers := bf.bridge, bf.workers
	if target == "" {
		if workers == 0 { // one per core (setWorkers refused negative counts)
			workers = runtime.NumCPU()
		}
		opts := localbridge.Options{Workers: workers, Stderr: &lineLogger{log: log.With().Str("component", "bridge").Logger()}}
		for _, m := range bf.envModules {
			// The local bridge may import the module of the env the trainer names.
			opts.ExtraArgs = append(opts.ExtraArgs, "--env-module", m)
		}
		b, err := localbridge.Start(ctx, opts)
		if err != nil {
			return nil, nil, fmt.Errorf("starting a local bridge (give --bridge to use a running one): %w", err)
		}
		target = b.Addr()
		log.Info().Str("addr", target).Int("workers", workers).Int("pid", b.Pid()).Msg("started a local bridge")
		local = supervise(b, opts, log)
	}
	stopLocal := func() {
		if local != nil {
			sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			if err := local.stop(sctx); err != nil {
				log.Warn().Err(err).Msg("stopping the local bridge")
			}
		}
	}
	c, err := envclient.Dial(ctx, envclient.Config{Target: target, ReadyTimeout: bf.timeout, ReconnectTimeout: bf.reconnect,
		TLSCAFile: bf.tls.CA, TLSServerName: bf.tls.Name, TLSCertFile: bf.tls.Cert, TLSKeyFile: bf.tls.Key, Logger: &log})
	if err != nil {
		stopLocal()
		return nil, nil, fmt.Errorf("bridge %s: %w", target, err)
	}
	if err := c.WaitReady(ctx); err != nil {
		c.Close()
		stopLocal()
		return nil, nil, fmt.Errorf("bridge %s (waited %s): %w", target, bf.timeout, err)
	}
	return c, func() { c.Close(); stopLocal() }, nil
}

// lineLogger re-emits the local bridge's stderr, line by line, through the
// trainer's logger (with component=bridge), so that the log stays one JSON
// object per line, with one timestamp: the bridge's own
// "2006-01-02 15:04:05,000 LEVEL logger: message" prefix becomes the
// line's level and a logger field. The bridge's INFO lines (serving,
// stopping) are debug here: the trainer says what matters of them itself,
// and the run's summary stays the last line at info.
type lineLogger struct {
	log     zerolog.Logger
	partial []byte
}

func (l *lineLogger) Write(p []byte) (int, error) {
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		if line := strings.TrimSpace(string(l.partial[:i])); line != "" {
			l.emit(line)
		}
		l.partial = l.partial[i+1:]
	}
}

// bridgeLine matches the bridge's log format (server.py's basicConfig).
var bridgeLine = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (DEBUG|INFO|WARNING|ERROR|CRITICAL) ([\w.]+): (.*)$`)

func (l *lineLogger) emit(line string) {
	m := bridgeLine.FindStringSubmatch(line)
	if m == nil {
		// A traceback's lines, or anything else printed to stderr.
		l.log.Warn().Msg(line)
		return
	}
	lvl := map[string]zerolog.Level{"DEBUG": zerolog.DebugLevel, "INFO": zerolog.DebugLevel, "WARNING": zerolog.WarnLevel}[m[1]]
	if m[1] == "ERROR" || m[1] == "CRITICAL" {
		lvl = zerolog.ErrorLevel
	}
	l.log.WithLevel(lvl).Str("logger", m[2]).Msg(m[3])
}

// describe resolves the env, turning NotFound into one line that names the
// id the bridge knows nearest to it and the paper names, not every id.
func describe(ctx context.Context, c *envclient.Client, env string, kw envclient.Kwargs) (envclient.EnvInfo, error) {
	info, err := c.Describe(ctx, env, kw)
	if err == nil {
		return info, nil
	}
	if status.Code(err) == codes.NotFound {
		list, lerr := c.ListEnvs(ctx)
		if lerr == nil {
			var aliases []string
			for a := range list.Aliases {
				aliases = append(aliases, a)
			}
			sort.Strings(aliases)
			msg := fmt.Sprintf("unknown env %s", envclient.Quote(env))
			if s := suggest(env, list.EnvIDs); s != "" {
				msg += fmt.Sprintf(": did you mean %s?", s)
			}
			if strings.Contains(env, ":") {
				// The bridge's own reason (a module it does not allow, say).
				msg += ": " + status.Convert(err).Message()
			}
			return info, usageError{fmt.Errorf("%s (the bridge knows the paper names %s and %d gymnasium ids: trainer envs --local lists them)",
				msg, strings.Join(aliases, ", "), len(list.EnvIDs)-len(aliases))}
		}
	}
	if status.Code(err) == codes.FailedPrecondition {
		// The bridge cannot make the env (a package it lacks): its one line,
		// which names the env.
		return info, errors.New(statusMessage(err))
	}
	if status.Code(err) == codes.InvalidArgument && len(kw) > 0 {
		// The bridge refused a kwarg's value (it names it): a bad --kwarg.
		return info, usageError{fmt.Errorf("flag --kwarg: %s", status.Convert(err).Message())}
	}
	return info, fmt.Errorf("describe %q: %w", env, err)
}

// statusMessage is the message of the gRPC status err wraps (the bridge's
// own words), or err's text when it wraps none. (status.Convert of a
// wrapped status prefixes every wrapper's text.)
func statusMessage(err error) string {
	var se interface{ GRPCStatus() *status.Status }
	if errors.As(err, &se) {
		return se.GRPCStatus().Message()
	}
	return err.Error()
}
