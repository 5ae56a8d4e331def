package figures

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stpis/stpis/convex"
	"github.com/stpis/stpis/stp"
)

// TestRunSTP: on synthetic ridge (m = 100, n = 100) both methods decrease
// f monotonically, and STP_IS ends with a smaller gap than STP.
func TestRunSTP(t *testing.T) {
	p := convex.SyntheticRidge(100, 100, 1)
	_, fs, err := p.Solve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	final := map[stp.Sampling]float64{}
	for _, s := range []stp.Sampling{stp.Uniform, stp.ISL} {
		tr, err := RunSTP(context.Background(), p, s, 1500, 1e-4, 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.F) != 1501 || tr.Evals[1500] != 2+3*1500-1 {
			t.Fatalf("%v: %d values, %d evaluations", s, len(tr.F), tr.Evals[len(tr.Evals)-1])
		}
		for k := 1; k < len(tr.F); k++ {
			if tr.F[k] > tr.F[k-1]+1e-15 {
				t.Fatalf("%v: f increased at %d", s, k)
			}
		}
		final[s] = tr.F[len(tr.F)-1] - fs
		if exact := p.Func(make([]float64, 100)); math.Abs(tr.F[0]-exact) > 1e-12 {
			t.Errorf("f(x0) = %v, want %v", tr.F[0], exact)
		}
	}
	if !(final[stp.ISL] < final[stp.Uniform]) {
		t.Errorf("final gaps: STP %v, STP_IS %v", final[stp.Uniform], final[stp.ISL])
	}
}

// TestRunFigure3 runs the SVM figure with 2 runs and checks the outputs.
func TestRunFigure3(t *testing.T) {
	if _, err := os.Stat("../../../shared/data/heart_scale"); err != nil {
		t.Skip("no shared data")
	}
	if testing.Short() {
		t.Skip("short")
	}
	out := t.TempDir()
	sum, err := Run(context.Background(), Config{Out: out, Data: "../../../shared/data", Runs: 2, Only: "figure3"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Cases) != 3 {
		t.Fatalf("%d cases", len(sum.Cases))
	}
	for _, c := range sum.Cases {
		for _, f := range c.Plots {
			if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
				t.Errorf("plot %s: %v", f, err)
			}
		}
		if *c.Methods[1].FinalMedian >= *c.Methods[0].FinalMedian {
			t.Errorf("%s: STP_IS final f %v not below STP %v", c.Name, *c.Methods[1].FinalMedian, *c.Methods[0].FinalMedian)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "summary_figure3.json")); err != nil {
		t.Error(err)
	}
}
