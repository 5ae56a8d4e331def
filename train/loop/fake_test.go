package loop

import (
	"context"
	"math/rand/v2"

	"github.com/stpis/stpis/envclient"
)

// quadRoller is the one stand-in for the bridge in these unit tests (the
// real bridge is exercised end to end by cmd/trainer's tests).
//
// With a target, the return of an episode is −‖W − W*‖² plus
// seed-determined noise, and its observation statistics are a function of
// the seed. Without one it answers any batch, whatever its shapes (the
// fuzz targets restore runs of any size), with returns and statistics
// drawn from each episode's seed.
//
// An episode lasts 10 steps, or length; truncate or terminate mark every
// episode as ended by the horizon (standing) or by the env (falling). The
// roller counts the episodes, and records each batch's seeds and the
// shifts it is asked for.
type quadRoller struct {
	target              []float64
	length              int
	truncate, terminate bool
	episodes            int
	batches             [][]uint64
	shifts              map[float64]int
}

func (q *quadRoller) Rollout(_ context.Context, specs []envclient.EpisodeSpec) ([]envclient.EpisodeResult, error) {
	out := make([]envclient.EpisodeResult, len(specs))
	seeds := make([]uint64, len(specs))
	if q.shifts == nil {
		q.shifts = map[float64]int{}
	}
	for i, s := range specs {
		q.episodes++
		seeds[i] = s.Seed
		q.shifts[s.Shift]++
		if q.target == nil {
			out[i] = anyEpisode(s)
		} else {
			out[i] = q.quadEpisode(s)
		}
		if q.length > 0 {
			out[i].Length = q.length
		}
		out[i].Truncated, out[i].Terminated = q.truncate, q.terminate
	}
	q.batches = append(q.batches, seeds)
	return out, nil
}

func (q *quadRoller) quadEpisode(s envclient.EpisodeSpec) envclient.EpisodeResult {
	r := rand.New(rand.NewPCG(s.Seed, 1))
	ret := 0.0
	for j, w := range s.W {
		ret -= (w - q.target[j]) * (w - q.target[j])
	}
	ret += 0.01 * r.NormFloat64()
	mean := make([]float64, s.Cols)
	m2 := make([]float64, s.Cols)
	for j := range mean {
		mean[j] = 1 + r.NormFloat64()
		m2[j] = 9 * r.Float64()
	}
	return envclient.EpisodeResult{Return: ret, ShiftedReturn: ret - s.Shift*10, Length: 10, ObsCount: 10, ObsMean: mean, ObsM2: m2}
}

func anyEpisode(s envclient.EpisodeSpec) envclient.EpisodeResult {
	r := rand.New(rand.NewPCG(s.Seed, 7))
	mean := make([]float64, s.Cols)
	m2 := make([]float64, s.Cols)
	for j := range mean {
		mean[j], m2[j] = r.NormFloat64(), r.Float64()
	}
	ret := r.NormFloat64()
	return envclient.EpisodeResult{Return: ret, ShiftedReturn: ret, Length: 10, ObsCount: 10, ObsMean: mean, ObsM2: m2}
}
