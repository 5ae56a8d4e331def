// Command tbwrite writes a fixed pair of TensorBoard event files into a
// directory, for bridge_py/tests/test_tensorboard_events.py to read back
// with the tensorboard package's own reader:
//
//	go run ./tbevents/internal/cmd/tbwrite DIR
//
// The first file is a run's first invocation, the second its resumption
// from a checkpoint at step 12: a session start at step 24, then steps 24
// to 48 with other values, which replace the first file's from step 24 on.
// It prints the files' paths, one a line.
package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/stpis/stpis/tbevents"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: tbwrite DIR")
		os.Exit(2)
	}
	if err := write(os.Args[1], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "tbwrite:", err)
		os.Exit(1)
	}
}

// t0 is the first file's time; every event is a second after the last.
var t0 = time.Unix(1_700_000_000, 0)

// step is one event of scalars.
type step struct {
	at     int64
	values []tbevents.Scalar
}

func write(dir string, out io.Writer) error {
	tick := t0
	opt := tbevents.Options{Host: "tbwrite", Now: func() time.Time { tick = tick.Add(time.Second); return tick }}
	// The first invocation: the initial evaluation at step 0, then three
	// iterations of 12 episodes, evaluated at 24.
	first := []step{
		{0, []tbevents.Scalar{{Tag: "eval/mean", Value: -4.25}, {Tag: "eval/std", Value: 0.5}}},
		{12, trainAt(12, 0)},
		{24, append(trainAt(24, 0), tbevents.Scalar{Tag: "eval/mean", Value: 30.5}, tbevents.Scalar{Tag: "eval/std", Value: 2})},
		{36, trainAt(36, 0)},
	}
	// The resumed invocation repeats from step 24 with other values.
	second := []step{{24, trainAt(24, 100)}, {36, trainAt(36, 100)}, {48, trainAt(48, 100)}}
	for i, steps := range [][]step{first, second} {
		path, err := file(dir, opt, steps[0].at, steps)
		if err != nil {
			return fmt.Errorf("file %d: %w", i+1, err)
		}
		fmt.Fprintln(out, path)
	}
	return nil
}

// file writes one event file: a session start at start, then steps; each
// step is flushed, as the trainer flushes each iteration.
func file(dir string, opt tbevents.Options, start int64, steps []step) (string, error) {
	w, err := tbevents.Create(dir, opt)
	if err != nil {
		return "", err
	}
	err = w.Start(start)
	for _, s := range steps {
		if err == nil {
			err = w.Scalars(s.at, s.values)
		}
		if err == nil {
			err = w.Flush()
		}
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return w.Path(), err
}

// trainAt is one iteration's training scalars at step, offset by off.
func trainAt(step int, off float64) []tbevents.Scalar {
	return []tbevents.Scalar{
		{Tag: "train/return", Value: float64(step)/4 + off},
		{Tag: "train/step_size", Value: 0.125},
		{Tag: "train/episodes_per_s", Value: 50 + off},
	}
}
