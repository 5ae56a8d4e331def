package report

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// denseTicks labels an axis every 1, 2 or 5 × 10^k, with 5 to 10 labels
// (gonum's default labels about 3).
type denseTicks struct{}

// Ticks implements plot.Ticker.
func (denseTicks) Ticks(lo, hi float64) []plot.Tick {
	// An empty range (gonum widens one by ±1, which does nothing from 2^53
	// on), one wider than float64 holds and one whose half step is below
	// float64's resolution at its magnitude get their ends labelled:
	// gonum's DefaultTicks panics on the first and does not end on the
	// second, and v += step did not move on the third (run files with
	// rewards of 1e17 did each).
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return endTicks(lo, hi)
	}
	mag := math.Pow(10, math.Floor(math.Log10((hi-lo)/5)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if step = m * mag; (hi-lo)/step <= 10 {
			break
		}
	}
	big := math.Max(math.Abs(lo), math.Abs(hi))
	if !(step/2 >= math.Nextafter(big, math.Inf(1))-big) {
		return endTicks(lo, hi)
	}
	first := math.Ceil(lo/step) * step
	var ticks []plot.Tick
	// By index, at most 11 major ticks ((hi−lo)/step ≤ 10), so that the
	// loop ends whatever the rounding.
	for i := 0; i <= 11; i++ {
		v := first + float64(i)*step
		if v > hi+step*1e-9 {
			break
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: tickLabel(v, step)})
		minor := v + step/2
		if minor <= hi {
			ticks = append(ticks, plot.Tick{Value: minor})
		}
	}
	return ticks
}

// tickLabel prints v, a multiple of step, with the decimals step has and no
// rounding noise: "0.7", not "0.7000000000000001".
func tickLabel(v, step float64) string {
	scale := math.Pow(10, max(0, -math.Floor(math.Log10(step))))
	return strconv.FormatFloat(math.Round(math.Round(v/step)*step*scale)/scale+0, 'f', -1, 64)
}

// endTicks labels the ends of a range that denseTicks cannot divide.
func endTicks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for _, v := range []float64{lo, hi} {
		if math.IsNaN(v) || math.IsInf(v, 0) || (len(ticks) > 0 && ticks[0].Value == v) {
			continue
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
	}
	return ticks
}
