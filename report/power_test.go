package report

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// powerControl is 40 runs whose times to the threshold are exponential
// with mean 1500 episodes, censored at a budget of 3000: about 86% reach,
// as HalfCheetah's default does.
func powerControl() ([]float64, []bool) {
	rng := rand.New(rand.NewPCG(3, 5))
	times, events := make([]float64, 40), make([]bool, 40)
	for i := range times {
		t := math.Round(rng.ExpFloat64() * 1500)
		if t >= 3000 {
			times[i] = 3000
			continue
		}
		times[i], events[i] = t, true
	}
	return times, events
}

// TestLogRankPowerCalibrated: with no difference the test finds the arm
// ahead about Alpha/2 of the time; the power grows with the hazard ratio
// and with the seeds; and the same options give the same figure.
func TestLogRankPowerCalibrated(t *testing.T) {
	times, events := powerControl()
	power := func(seeds int, hr float64) float64 {
		t.Helper()
		p, err := LogRankPower(times, events, PowerOptions{Seeds: seeds, HazardRatio: hr, Alpha: 0.1, Sims: 2000, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// 2000 draws of a rate of 0.05: standard error 0.005.
	if p := power(40, 1); math.Abs(p-0.05) > 0.02 {
		t.Errorf("power at hazard ratio 1 = %.3f, want about alpha/2 = 0.05", p)
	}
	p15, p2, p2x80 := power(40, 1.5), power(40, 2), power(80, 2)
	if !(p15 > 0.2 && p2 > p15+0.15 && p2x80 > p2+0.03) {
		t.Errorf("power 40 seeds at 1.5: %.3f, at 2: %.3f; 80 seeds at 2: %.3f; want each well above the one before", p15, p2, p2x80)
	}
	if again := power(40, 1.5); again != p15 {
		t.Errorf("the same options gave %.4f then %.4f", p15, again)
	}
	if p := power(40, 1/1.5); p > 0.02 {
		t.Errorf("power of a worse arm to be found ahead = %.3f, want near 0", p)
	}
}

// TestLogRankPowerRefusesBadOptions: each bad option is named with its
// limit.
func TestLogRankPowerRefusesBadOptions(t *testing.T) {
	times, events := powerControl()
	good := PowerOptions{Seeds: 20, HazardRatio: 1.5, Alpha: 0.1, Sims: 10, Seed: 1}
	for _, c := range []struct {
		mod  func(*PowerOptions)
		want string
	}{
		{func(o *PowerOptions) { o.Seeds = 1 }, "seeds 1, want at least 2"},
		{func(o *PowerOptions) { o.HazardRatio = 0 }, "hazard ratio 0, want a finite number above 0"},
		{func(o *PowerOptions) { o.HazardRatio = math.NaN() }, "hazard ratio NaN"},
		{func(o *PowerOptions) { o.Alpha = 1 }, "alpha 1, want 0 < alpha < 1"},
		{func(o *PowerOptions) { o.Sims = 0 }, "sims 0, want at least 1"},
	} {
		o := good
		c.mod(&o)
		if _, err := LogRankPower(times, events, o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one containing %q", o, err, c.want)
		}
	}
	if _, err := LogRankPower([]float64{3000, 3000}, []bool{false, false}, good); err == nil || !strings.Contains(err.Error(), "no event") {
		t.Errorf("a control that never reached: error %v, want one saying it has no event", err)
	}
}

// TestHazardRatio: an arm whose runs all reach before the other's has a
// ratio above 1, its mirror the inverse; equal samples give 1; an arm
// against one that never reached gives +Inf.
func TestHazardRatio(t *testing.T) {
	fast := []float64{100, 200, 300, 400, 3000}
	slow := []float64{500, 600, 700, 3000, 3000}
	fastE := []bool{true, true, true, true, false}
	slowE := []bool{true, true, true, false, false}
	hazardRatio := func(t1 []float64, e1 []bool, t2 []float64, e2 []bool) (float64, error) {
		r, err := LogRank(t1, e1, t2, e2)
		return r.HazardRatio(), err
	}
	hr, err := hazardRatio(fast, fastE, slow, slowE)
	if err != nil {
		t.Fatal(err)
	}
	back, err := hazardRatio(slow, slowE, fast, fastE)
	if err != nil {
		t.Fatal(err)
	}
	if !(hr > 1) || math.Abs(hr*back-1) > 1e-12 {
		t.Errorf("hazard ratios %v and %v: want the first above 1 and their product 1", hr, back)
	}
	if same, _ := hazardRatio(fast, fastE, fast, fastE); math.Abs(same-1) > 1e-12 {
		t.Errorf("equal samples: %v, want 1", same)
	}
	if inf, _ := hazardRatio(fast, fastE, []float64{3000, 3000}, []bool{false, false}); !math.IsInf(inf, 1) {
		t.Errorf("against a sample with no event: %v, want +Inf", inf)
	}
	if _, err := hazardRatio(nil, nil, fast, fastE); err == nil {
		t.Error("an empty sample: no error")
	}
}
