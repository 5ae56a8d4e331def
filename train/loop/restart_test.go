package loop

import (
	"context"
	"github.com/stpis/stpis/train"
	"slices"
	"strings"
	"testing"
)

func restartConfig() train.Config {
	cfg := testConfig("stp")
	st(cfg).Directions, st(cfg).Top, st(cfg).Step, st(cfg).Rate, st(cfg).Noise = 3, 2, train.Combined, 0.04, 0.02
	st(cfg).Basis = train.Orthogonal
	cfg.Limits.MaxEpisodes = 400
	cfg.Restart = train.Restart{After: 48, Length: 0.5} // an iteration is 6 points × K 2
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
	q := &quadRoller{target: testTarget, length: 2}
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
		before := r.Progress()
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
		if before.HasBest && r.Progress().BestEval < before.BestEval {
			t.Fatalf("iteration %d: the best evaluation went from %v to %v", pt.Iter, before.BestEval, r.Progress().BestEval)
		}
	}
	// Checks at 48 episodes into each attempt: 48, 96, ...
	want := []int{48, 96, 144, 192, 240, 288, 336, 384}
	if !slices.Equal(restartedAt, want) || r.Progress().Attempt.Restarts != len(want) || r.Result().Restarts != len(want) {
		t.Fatalf("restarted at %v (%d restarts), want %v", restartedAt, r.Progress().Attempt.Restarts, want)
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
	without.Restart = train.Restart{}
	a, err := New(with, testInfo)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(without, testInfo)
	if err != nil {
		t.Fatal(err)
	}
	qa := &quadRoller{target: testTarget, length: 5}
	qb := &quadRoller{target: testTarget, length: 5}
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
	if c := a.Progress().Attempt; c.Restarts != 0 || !c.Checked {
		t.Fatalf("attempt %+v, want checked and never restarted", c)
	}
}

// TestRestartResumes: a run restored after a restart continues bit-exactly,
// on the restarted attempt's basis and seeds.
func TestRestartResumes(t *testing.T) {
	cfg := restartConfig()
	a, _ := New(cfg, testInfo)
	b, _ := New(cfg, testInfo)
	qa := &quadRoller{target: testTarget, length: 2}
	qb := &quadRoller{target: testTarget, length: 2}
	for range 10 { // past the first restart, at 4 iterations
		if _, err := b.Iterate(context.Background(), qb); err != nil {
			t.Fatal(err)
		}
	}
	if b.Progress().Attempt.Restarts != 2 {
		t.Fatalf("%d restarts after 10 iterations, want 2", b.Progress().Attempt.Restarts)
	}
	continuesAs(t, a, qa, roundTrip(t, b), qb, 10, 20)
}

func TestRestartErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct {
		r     train.Restart
		field string
	}{
		{train.Restart{After: -1, Length: 0.1}, "restart"},
		{train.Restart{After: 48, Length: 1.5}, "restart"},
		{train.Restart{After: 48}, "restart"},
		{train.Restart{After: 48, Length: 0.5, Early: 48, EarlyLength: 0.1}, "restart"},
		{train.Restart{After: 48, Length: 0.5, Early: 24}, "restart"},
		{train.Restart{After: 48, Length: 0.5, Early: 24, EarlyLength: 2}, "restart"},
		{train.Restart{After: 48, Length: 0.5, EarlyLength: 0.1}, "restart"},
	} {
		cfg := restartConfig()
		cfg.Restart = tc.r
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.field+":") {
			t.Errorf("%+v: err = %v, want one naming %s", tc.r, err, tc.field)
		}
	}
	cfg := restartConfig()
	cfg.Restart.After = 12 // one iteration: no room for the check's window
	if _, err := New(cfg, testInfo); err == nil || !strings.Contains(err.Error(), "restart:") {
		t.Errorf("restart 12: err = %v, want one naming restart", err)
	}
	cfg = restartConfig()
	cfg.Restart.Early, cfg.Restart.EarlyLength = 12, 0.1
	if _, err := New(cfg, testInfo); err == nil || !strings.Contains(err.Error(), "restart:") {
		t.Errorf("early check at 12: err = %v, want one naming restart", err)
	}
}

// TestRestartEarlyCheck: an early check gives up an attempt at its own
// count when its episodes are too short for it, and leaves the attempts
// that pass it to the check after it.
func TestRestartEarlyCheck(t *testing.T) {
	for _, tc := range []struct {
		name        string
		earlyLength float64
		length      int // of every episode, of 10 steps
		want        []int
	}{
		{"fails early", 0.5, 2, []int{24, 48, 72, 96, 120, 144, 168, 192, 216, 240, 264, 288, 312, 336, 360, 384}},
		{"passes early, fails after", 0.1, 2, []int{48, 96, 144, 192, 240, 288, 336, 384}},
		{"passes both", 0.1, 6, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := restartConfig()
			cfg.Restart.Early, cfg.Restart.EarlyLength = 24, tc.earlyLength
			r, err := New(cfg, testInfo)
			if err != nil {
				t.Fatal(err)
			}
			q := &quadRoller{target: testTarget, length: tc.length}
			var restartedAt []int
			for !r.Done() {
				pt, err := r.Iterate(context.Background(), q)
				if err != nil {
					t.Fatal(err)
				}
				if pt.Restarted {
					restartedAt = append(restartedAt, pt.Episodes)
				}
			}
			if !slices.Equal(restartedAt, tc.want) {
				t.Fatalf("restarted at %v, want %v", restartedAt, tc.want)
			}
		})
	}
}

// TestAttemptIsItsSeed: an attempt given up sooner (by an early check)
// leaves the next attempt as it would have been, only earlier: the same
// points on the same start states.
func TestAttemptIsItsSeed(t *testing.T) {
	late := restartConfig()
	early := late
	early.Restart.Early, early.Restart.EarlyLength = 24, 0.5
	type batch struct {
		seeds  []uint64
		points [][]float64
	}
	run := func(cfg train.Config) (attempts [][]batch) {
		r, err := New(cfg, testInfo)
		if err != nil {
			t.Fatal(err)
		}
		q := &quadRoller{target: testTarget, length: 2}
		attempts = [][]batch{nil}
		for !r.Done() {
			points, err := roundTrip(t, r).opt.Propose()
			if err != nil {
				t.Fatal(err)
			}
			n := len(q.batches)
			pt, err := r.Iterate(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			a := &attempts[len(attempts)-1]
			*a = append(*a, batch{q.batches[n], points})
			if pt.Restarted {
				attempts = append(attempts, nil)
			}
		}
		return attempts
	}
	a, b := run(late), run(early)
	if len(b) < 2*len(a)-2 {
		t.Fatalf("%d attempts with the early check, %d without: it gave up none sooner", len(b), len(a))
	}
	for i := range len(a) - 1 {
		for j := range 2 { // the iterations both runs give the attempt
			if !slices.Equal(a[i][j].seeds, b[i][j].seeds) || !slices.EqualFunc(a[i][j].points, b[i][j].points, slices.Equal) {
				t.Fatalf("attempt %d, iteration %d: start states or points differ between the runs", i, j)
			}
		}
	}
}

// TestRestartEarlyResumes: a run restored between its early check and the
// check after it continues bit-exactly.
func TestRestartEarlyResumes(t *testing.T) {
	cfg := restartConfig()
	cfg.Restart.Early, cfg.Restart.EarlyLength = 24, 0.1
	a, _ := New(cfg, testInfo)
	b, _ := New(cfg, testInfo)
	qa := &quadRoller{target: testTarget, length: 2}
	qb := &quadRoller{target: testTarget, length: 2}
	for range 7 { // one restart at 4 iterations, the next attempt past its early check
		if _, err := b.Iterate(context.Background(), qb); err != nil {
			t.Fatal(err)
		}
	}
	if c := b.Progress().Attempt; c.Restarts != 1 || !c.Early.Checked || c.Checked {
		t.Fatalf("attempt %+v after 7 iterations, want 1 restart and the early check passed", c)
	}
	continuesAs(t, a, qa, roundTrip(t, b), qb, 7, 20)
}
