package envclient_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/stpis/stpis/envclient"
)

// Connect to two bridge replicas, wait until one answers, and run a batch
// of Hopper episodes under a zero policy. (No output is checked: it needs
// running bridges.)
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := envclient.Dial(ctx, envclient.Config{Target: "127.0.0.1:50051,127.0.0.1:50052"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if err := c.WaitReady(ctx); err != nil {
		log.Fatal(err) // "bridge unreachable: ..."
	}
	info, err := c.Describe(ctx, "Hopper-v1", nil)
	if err != nil {
		log.Fatal(err)
	}
	specs := make([]envclient.EpisodeSpec, 8)
	for i := range specs {
		std := make([]float64, info.ObsDim)
		for j := range std {
			std[j] = 1
		}
		specs[i] = envclient.EpisodeSpec{
			EnvID: info.ResolvedID, Rows: info.ActDim, Cols: info.ObsDim,
			W: make([]float64, info.ActDim*info.ObsDim), ObsMean: make([]float64, info.ObsDim), ObsStd: std,
			Seed: uint64(i), Horizon: 1000, Shift: 1,
		}
	}
	results, err := c.Rollout(ctx, specs)
	if err != nil {
		log.Fatal(err)
	}
	for i, r := range results {
		fmt.Println(i, r.Return, r.Length)
	}
}
