// Command power says what a comparison on a number of seeds can decide on
// a task: the log-rank test's power against an arm that reaches the
// threshold sooner by a hazard ratio, simulated from a control arm's own
// runs (report.LogRankPower), and, for each other arm given, its hazard
// ratio against the control over their common seeds and its log-rank p.
//
//	go run ./bench/power [-seeds 101-140] [-n 20,40,80] [-hr 1.25,1.5,2,3]
//	    [-alpha 0.1] [-sims 2000] [-seed 1] CONTROL [ARM...]
//
// CONTROL and each ARM are run folders of one task and method (as
// results/cmaes-dev/runs/HalfCheetah-v1/stp-combined). It prints one JSON
// object: the control's seeds, reached and budget, power[n][hr] (the share
// of simulated pairs in which the better arm is found ahead with p <
// alpha), and the arms.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/stpis/stpis/report"
)

type arm struct {
	Arm            string   `json:"arm"`
	Seeds          int      `json:"seeds"`
	Reached        int      `json:"reached"`
	ControlReached int      `json:"control_reached"`
	HazardRatio    *float64 `json:"hazard_ratio"` // null: not finite (an arm with no event)
	LogRankP       *float64 `json:"logrank_p"`    // null: nothing to compare
}

type output struct {
	Control string                        `json:"control"`
	Seeds   int                           `json:"seeds"`
	Reached int                           `json:"reached"`
	Budget  float64                       `json:"budget"`
	Alpha   float64                       `json:"alpha"`
	Sims    int                           `json:"sims"`
	Power   map[string]map[string]float64 `json:"power"`
	Arms    []arm                         `json:"arms"`
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "power:", err)
		os.Exit(2)
	}
}

// outcome is one run: episodes to the threshold (ok), or the episodes it
// ran (censored).
type outcome struct {
	t  float64
	ok bool
}

// sample is one arm's runs by seed.
type sample map[uint64]outcome

func load(dir string, lo, hi uint64) (sample, error) {
	runs, _, err := report.Load(dir)
	if err != nil {
		return nil, err
	}
	s := sample{}
	for _, r := range runs {
		seed := r.Meta.Seed
		if hi > 0 && (seed < lo || seed > hi) {
			continue
		}
		if _, dup := s[seed]; dup {
			return nil, fmt.Errorf("%s: seed %d twice: give one method's folder", dir, seed)
		}
		t, ok := report.SurvivalTime(r)
		s[seed] = outcome{t, ok}
	}
	if len(s) == 0 {
		return nil, fmt.Errorf("%s: no run of the seeds asked", dir)
	}
	return s, nil
}

func (s sample) common(o sample) (t1 []float64, e1 []bool, t2 []float64, e2 []bool) {
	for seed, a := range s {
		if b, ok := o[seed]; ok {
			t1, e1 = append(t1, a.t), append(e1, a.ok)
			t2, e2 = append(t2, b.t), append(e2, b.ok)
		}
	}
	return
}

// finite is v, or nil (JSON null) when v is NaN or infinite.
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func list[T any](name, v string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for _, f := range strings.Split(v, ",") {
		x, err := parse(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("-%s %q: want comma-separated numbers", name, v)
		}
		out = append(out, x)
	}
	return out, nil
}

func run(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("power", flag.ContinueOnError)
	seeds := fs.String("seeds", "", "FIRST-LAST: only these seeds, of the control and the arms")
	ns := fs.String("n", "20,40,80", "seeds per arm, comma-separated")
	hrs := fs.String("hr", "1.25,1.5,2,3", "hazard ratios, comma-separated")
	alpha := fs.Float64("alpha", 0.1, "the log-rank p a comparison must be under")
	sims := fs.Int("sims", 2000, "simulated pairs of arms per cell")
	seed := fs.Uint64("seed", 1, "the simulation's random seed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() < 1 {
		return errors.New("want a control arm's run folder, then other arms'")
	}
	var lo, hi uint64
	if *seeds != "" {
		a, b, ok := strings.Cut(*seeds, "-")
		var err1, err2 error
		lo, err1 = strconv.ParseUint(a, 10, 64)
		hi, err2 = strconv.ParseUint(b, 10, 64)
		if !ok || err1 != nil || err2 != nil || hi < lo || hi == 0 {
			return fmt.Errorf("-seeds %q: want FIRST-LAST, as 101-140", *seeds)
		}
	}
	nList, err := list("n", *ns, strconv.Atoi)
	if err != nil {
		return err
	}
	hrList, err := list("hr", *hrs, func(s string) (float64, error) { return strconv.ParseFloat(s, 64) })
	if err != nil {
		return err
	}
	control, err := load(fs.Arg(0), lo, hi)
	if err != nil {
		return err
	}
	out := output{Control: fs.Arg(0), Seeds: len(control), Alpha: *alpha, Sims: *sims, Power: map[string]map[string]float64{}, Arms: []arm{}}
	var times []float64
	var events []bool
	for _, r := range control {
		times, events = append(times, r.t), append(events, r.ok)
		out.Budget = max(out.Budget, r.t)
		if r.ok {
			out.Reached++
		}
	}
	for _, n := range nList {
		row := map[string]float64{}
		for _, hr := range hrList {
			p, err := report.LogRankPower(times, events, report.PowerOptions{Seeds: n, HazardRatio: hr, Alpha: *alpha, Sims: *sims, Seed: *seed})
			if err != nil {
				return err
			}
			row[strconv.FormatFloat(hr, 'g', -1, 64)] = p
		}
		out.Power[strconv.Itoa(n)] = row
	}
	for _, dir := range fs.Args()[1:] {
		other, err := load(dir, lo, hi)
		if err != nil {
			return err
		}
		t1, e1, t2, e2 := other.common(control)
		if len(t1) == 0 {
			return fmt.Errorf("%s: no seed in common with the control", dir)
		}
		lr, err := report.LogRank(t1, e1, t2, e2)
		if err != nil {
			return err
		}
		a := arm{Arm: dir, Seeds: len(t1), HazardRatio: finite(lr.HazardRatio()), LogRankP: finite(lr.P)}
		for i := range e1 {
			if e1[i] {
				a.Reached++
			}
			if e2[i] {
				a.ControlReached++
			}
		}
		out.Arms = append(out.Arms, a)
	}
	enc := json.NewEncoder(w)
	return enc.Encode(out)
}
