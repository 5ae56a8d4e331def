package train

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stpis/stpis/envclient"
)

// lengthRoller is quadRoller whose episodes last `length` of its 10 steps.
type lengthRoller struct {
	seedRoller
	length int
}

func (q *lengthRoller) Rollout(ctx context.Context, specs []envclient.EpisodeSpec) ([]envclient.EpisodeResult, error) {
	res, err := q.seedRoller.Rollout(ctx, specs)
	for i := range res {
		res[i].Length = q.length
	}
	return res, err
}

func restartConfig() Config {
	cfg := testConfig(STP)
	cfg.STP.Directions, cfg.STP.Top, cfg.STP.Step, cfg.STP.Rate, cfg.STP.Noise = 3, 2, Combined, 0.04, 0.02
	cfg.STP.Basis = Orthogonal
	cfg.Limits.MaxEpisodes = 400
	cfg.Restart = Restart{After: 48, Length: 0.5} // an iteration is 6 points × K 2
	return cfg
}

// TestRestartGivesUpShortEpisodes runs episodes that end at 2 of 10 steps:
// every attempt is given up at its check, with a fresh x, normalizer and
// seed, and the episode count, evaluations and best policy carry over.
func TestRestartGivesUpShortEpisodes(t *testing.T) {
	cfg := restartConfig()
	r, err := New(cfg, testInfo)
	if err != nil {
		t.Fatal(err)
	}
	q := &lengthRoller{seedRoller: seedRoller{quadRoller: quadRoller{target: testTarget}}, length: 2}
	fresh, err := New(cfg, testInfo)
	if err != nil {
		t.Fatal(err)
	}
	firstPoints, err := fresh.opt.Propose()
	if err != nil {
		t.Fatal(err)
	}
	var restartedAt []int
	for !r.Done() {
		before := r.Counters()
		pt, err := r.Iterate(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if pt.Episodes != before.Episodes+12 || pt.Iter != before.Iter+1 {
			t.Fatalf("iteration %d: episodes %d → %d: the counts do not carry over", pt.Iter, before.Episodes, pt.Episodes)
		}
		if pt.Restarted {
			restartedAt = append(restartedAt, pt.Episodes)
			if slices.ContainsFunc(r.X(), func(v float64) bool { return v != 0 }) || r.norm.Count != 0 {
				t.Fatalf("after the restart at %d episodes x = %v and the normalizer has %v observations, want a fresh start", pt.Episodes, r.X(), r.norm.Count)
			}
			// The fresh attempt draws its own directions.
			points, err := roundTrip(t, r).opt.Propose()
			if err != nil {
				t.Fatal(err)
			}
			if slices.EqualFunc(points, firstPoints, slices.Equal) {
				t.Fatalf("after the restart at %d episodes the first batch repeats the first attempt's", pt.Episodes)
			}
		}
		if before.HasBest && r.Counters().BestEval < before.BestEval {
			t.Fatalf("iteration %d: the best evaluation went from %v to %v", pt.Iter, before.BestEval, r.Counters().BestEval)
		}
	}
	// Checks at 48 episodes into each attempt: 48, 96, ...
	want := []int{48, 96, 144, 192, 240, 288, 336, 384}
	if !slices.Equal(restartedAt, want) || r.Counters().Attempt.Restarts != len(want) || r.Result().Restarts != len(want) {
		t.Fatalf("restarted at %v (%d restarts), want %v", restartedAt, r.Counters().Attempt.Restarts, want)
	}
	// Each attempt draws its own start states.
	var train [][]uint64 // the training batches (evaluations run 3 episodes)
	for _, b := range q.batches {
		if len(b) == 12 {
			train = append(train, b)
		}
	}
	if first, second := train[0], train[4]; slices.Equal(first, second) {
		t.Fatal("the second attempt's first batch ran the first attempt's seeds")
	}
}

// TestRestartKeepsLongEpisodes: an attempt whose episodes last long
// enough is the run without the rule, to the bit.
func TestRestartKeepsLongEpisodes(t *testing.T) {
	with := restartConfig()
	without := with
	without.Restart = Restart{}
	a, err := New(with, testInfo)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(without, testInfo)
	if err != nil {
		t.Fatal(err)
	}
	qa := &lengthRoller{seedRoller: seedRoller{quadRoller: quadRoller{target: testTarget}}, length: 5}
	qb := &lengthRoller{seedRoller: seedRoller{quadRoller: quadRoller{target: testTarget}}, length: 5}
	for !a.Done() {
		pa, err := a.Iterate(context.Background(), qa)
		if err != nil {
			t.Fatal(err)
		}
		pb, err := b.Iterate(context.Background(), qb)
		if err != nil {
			t.Fatal(err)
		}
		if pa != pb {
			t.Fatalf("iteration %d differs:\n%+v\n%+v", pa.Iter, pa, pb)
		}
	}
	if c := a.Counters().Attempt; c.Restarts != 0 || !c.Checked {
		t.Fatalf("attempt %+v, want checked and never restarted", c)
	}
}

// TestRestartResumes: a run restored after a restart continues bit-exactly,
// on the restarted attempt's basis and seeds.
func TestRestartResumes(t *testing.T) {
	cfg := restartConfig()
	a, _ := New(cfg, testInfo)
	b, _ := New(cfg, testInfo)
	qa := &lengthRoller{seedRoller: seedRoller{quadRoller: quadRoller{target: testTarget}}, length: 2}
	qb := &lengthRoller{seedRoller: seedRoller{quadRoller: quadRoller{target: testTarget}}, length: 2}
	for range 10 { // past the first restart, at 4 iterations
		if _, err := b.Iterate(context.Background(), qb); err != nil {
			t.Fatal(err)
		}
	}
	if b.Counters().Attempt.Restarts != 2 {
		t.Fatalf("%d restarts after 10 iterations, want 2", b.Counters().Attempt.Restarts)
	}
	continuesAs(t, a, qa, roundTrip(t, b), qb, 10, 20)
}

func TestRestartErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct {
		r     Restart
		field string
	}{
		{Restart{After: -1, Length: 0.1}, "restart-after"},
		{Restart{After: 48, Length: 1.5}, "restart-length"},
		{Restart{After: 48}, "restart-length"},
	} {
		cfg := restartConfig()
		cfg.Restart = tc.r
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.field+":") {
			t.Errorf("%+v: err = %v, want one naming %s", tc.r, err, tc.field)
		}
	}
	cfg := restartConfig()
	cfg.Restart.After = 12 // one iteration: no room for the check's window
	if _, err := New(cfg, testInfo); err == nil || !strings.Contains(err.Error(), "restart-after:") {
		t.Errorf("restart-after 12: err = %v, want one naming restart-after", err)
	}
}

// evalLengthRoller is lengthRoller whose evaluation batches (of
// EvalEpisodes 3) last evalLength(k) steps, k counting the evaluations.
type evalLengthRoller struct {
	lengthRoller
	evals      int
	evalLength func(k int) int
}

func (q *evalLengthRoller) Rollout(ctx context.Context, specs []envclient.EpisodeSpec) ([]envclient.EpisodeResult, error) {
	res, err := q.lengthRoller.Rollout(ctx, specs)
	if len(specs) == 3 {
		for i := range res {
			res[i].Length = q.evalLength(q.evals)
		}
		q.evals++
	}
	return res, err
}

// TestClimb: an attempt climbs with the climb's directions from the first
// evaluation whose episodes all last the horizon (the second, at 96
// episodes: the first has one a step short), from the point it reached;
// the iteration of the switch is marked, and a run restored after it goes
// on bit-exactly.
func TestClimb(t *testing.T) {
	cfg := restartConfig()
	cfg.STP.ClimbDirections, cfg.STP.ClimbTop = 5, 3
	roller := func() *evalLengthRoller {
		return &evalLengthRoller{
			lengthRoller: lengthRoller{seedRoller: seedRoller{quadRoller: quadRoller{target: testTarget}}, length: 5},
			evalLength: func(k int) int {
				if k == 0 {
					return 9
				}
				return 10
			},
		}
	}
	r, err := New(cfg, testInfo)
	if err != nil {
		t.Fatal(err)
	}
	// plain is the same run without the climb: the two are the same run
	// up to the switch, which keeps the point reached.
	plain, err := New(restartConfig(), testInfo)
	if err != nil {
		t.Fatal(err)
	}
	q, qp := roller(), roller()
	var climbedAt []int
	for !r.Done() {
		before := r.Counters().Episodes
		pt, err := r.Iterate(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if !r.climbing() || pt.Climbed {
			pp, err := plain.Iterate(context.Background(), qp)
			if err != nil {
				t.Fatal(err)
			}
			if pp.Climbed = pt.Climbed; pp != pt || !slices.Equal(plain.X(), r.X()) {
				t.Fatalf("iteration %d before the climb differs from the run without it:\n%+v\n%+v", pt.Iter, pt, pp)
			}
		}
		// 3 directions × 2 points × K 2 up to the evaluation at 96
		// episodes (every 4 iterations), then 5 × 2 × 2.
		want := 12
		if before >= 96 {
			want = 20
		}
		if got := pt.Episodes - before; got != want {
			t.Fatalf("iteration %d from %d episodes ran %d episodes, want %d", pt.Iter, before, got, want)
		}
		if pt.Climbed {
			climbedAt = append(climbedAt, pt.Episodes)
		}
		if pt.Restarted {
			t.Fatalf("restarted at %d episodes: episodes of 5 steps pass the check", pt.Episodes)
		}
	}
	if !slices.Equal(climbedAt, []int{96}) {
		t.Fatalf("climbs marked at %v, want [96]", climbedAt)
	}
	// Resume across the switch, and after it.
	a, _ := New(cfg, testInfo)
	b, _ := New(cfg, testInfo)
	qa, qb := roller(), roller()
	for range 10 { // past the climb, at 8 iterations
		if _, err := b.Iterate(context.Background(), qb); err != nil {
			t.Fatal(err)
		}
	}
	if !b.climbing() {
		t.Fatal("not climbing after 10 iterations")
	}
	continuesAs(t, a, qa, roundTrip(t, b), qb, 10, 16)
}

// TestClimbErrorsNameTheField: climb settings need the combined step and
// are set together.
func TestClimbErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Config)
		field  string
	}{
		{"top alone", func(c *Config) { c.STP.ClimbTop = 2 }, "climb-top"},
		{"directions alone", func(c *Config) { c.STP.ClimbDirections = 4 }, "climb-top"},
		{"top above directions", func(c *Config) { c.STP.ClimbDirections, c.STP.ClimbTop = 4, 5 }, "climb-top"},
		{"negative", func(c *Config) { c.STP.ClimbDirections, c.STP.ClimbTop = -1, 1 }, "climb-directions"},
		{"not combined", func(c *Config) {
			c.STP.ClimbDirections, c.STP.ClimbTop, c.STP.Step, c.STP.Top = 4, 2, Adaptive, 0
		}, "climb-directions"},
	} {
		cfg := restartConfig()
		tc.change(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.field+":") {
			t.Errorf("%s: err = %v, want one naming %s", tc.name, err, tc.field)
		}
	}
}
