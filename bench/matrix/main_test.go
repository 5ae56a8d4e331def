package main

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Every matrix file loads, and its tasks are package tasks' (Load checks).
func TestEveryMatrixLoads(t *testing.T) {
	files, err := filepath.Glob("../matrices/*.yaml")
	if err != nil || len(files) < 2 {
		t.Fatalf("matrix files: %v, %v", files, err)
	}
	for _, f := range files {
		if _, err := Load(f); err != nil {
			t.Error(err)
		}
	}
}

// rl.yaml is results/rl: five tasks, the seeds each method ran there.
func TestRLMatrixRuns(t *testing.T) {
	m, err := Load("../matrices/rl.yaml")
	if err != nil {
		t.Fatal(err)
	}
	runs, err := m.Runs(overrides{})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, r := range runs {
		count[r.Env+" "+r.Method]++
	}
	want := map[string]int{
		"Swimmer-v1 default": 20, "Swimmer-v1 paper": 10, "Swimmer-v1 ars": 20,
		"Hopper-v1 default": 20, "Hopper-v1 paper": 10, "Hopper-v1 ars": 20,
		"HalfCheetah-v1 default": 20, "HalfCheetah-v1 paper": 10, "HalfCheetah-v1 ars": 20,
		"Walker2d-v1 default": 10, "Walker2d-v1 ars": 10, "Ant-v1 default": 10, "Ant-v1 ars": 10,
		"Swimmer-v1 cmaes": 20, "Hopper-v1 cmaes": 20, "HalfCheetah-v1 cmaes": 20, "Walker2d-v1 cmaes": 10, "Ant-v1 cmaes": 10,
	}
	for k, n := range want {
		if count[k] != n {
			t.Errorf("%s: %d runs, want %d", k, count[k], n)
		}
	}
	if len(runs) != 270 {
		t.Errorf("%d runs, want 270", len(runs))
	}
	first := strings.Join(runs[0].Args, " ")
	if first != "--env Swimmer-v1 --seed 1 --max-episodes 1000 --eval-spacing 40 --continue-after-threshold" {
		t.Errorf("first run: %s", first)
	}
}

// The overrides narrow the matrix, and a task it lacks needs a budget.
func TestOverrides(t *testing.T) {
	m, err := Load("../matrices/rl.yaml")
	if err != nil {
		t.Fatal(err)
	}
	runs, err := m.Runs(overrides{tasks: "Swimmer-v1 Walker2d-v1", methods: "ars paper", seeds: "101-102"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range runs {
		got = append(got, r.Env+" "+r.Method+" "+strings.Join(r.Args[2:], " "))
	}
	want := []string{
		"Swimmer-v1 ars --method ars --config bench/ars-v1.yaml --seed 101 --max-episodes 1000 --eval-spacing 40 --continue-after-threshold",
		"Swimmer-v1 ars --method ars --config bench/ars-v1.yaml --seed 102 --max-episodes 1000 --eval-spacing 40 --continue-after-threshold",
		"Swimmer-v1 paper --method stp_is --step adaptive --preset paper --seed 101 --max-episodes 1000 --eval-spacing 40 --continue-after-threshold",
		"Swimmer-v1 paper --method stp_is --step adaptive --preset paper --seed 102 --max-episodes 1000 --eval-spacing 40 --continue-after-threshold",
		"Walker2d-v1 ars --method ars --seed 101 --max-episodes 4000 --eval-spacing 40 --continue-after-threshold",
		"Walker2d-v1 ars --method ars --seed 102 --max-episodes 4000 --eval-spacing 40 --continue-after-threshold",
		"Walker2d-v1 paper --method stp_is --step adaptive --preset paper --seed 101 --max-episodes 4000 --eval-spacing 40 --continue-after-threshold",
		"Walker2d-v1 paper --method stp_is --step adaptive --preset paper --seed 102 --max-episodes 4000 --eval-spacing 40 --continue-after-threshold",
	}
	if !slices.Equal(got, want) {
		t.Errorf("runs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, o := range []overrides{{tasks: "Hopper-v4"}, {methods: "nope"}, {seeds: "3-1"}} {
		if _, err := m.Runs(o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	if runs, err := m.Runs(overrides{tasks: "Hopper-v4", budget: 4000, methods: "paper", seeds: "1"}); err != nil || len(runs) != 1 {
		t.Errorf("a task the matrix lacks, with a budget: %v, %v", runs, err)
	}
}

// The output is what bench/rl.sh reads: out, plot, runs, then done after
// each task's last run.
func TestWrite(t *testing.T) {
	var b bytes.Buffer
	if err := run([]string{"-tasks", "Hopper-v4", "-budget", "40", "-seeds", "1", "-out", "/tmp/x", "../matrices/v4.yaml"}, &b); err != nil {
		t.Fatal(err)
	}
	want := "out\t/tmp/x\nplot\tdefault,ars,paper\n" +
		"run\tHopper-v4\tpaper\t1\t--env\tHopper-v4\t--method\tstp_is\t--step\tadaptive\t--preset\tpaper\t--seed\t1\t--max-episodes\t40\t--eval-spacing\t40\t--continue-after-threshold\n" +
		"done\tHopper-v4\tsuccess\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}

func TestBadFilesAreRefused(t *testing.T) {
	for _, m := range []Matrix{
		{Methods: []Method{{Name: "a"}}, Tasks: []Task{{Env: "Hopper-v1", Budget: 1}}, Seeds: "1"},                                   // no out
		{Out: "o", Methods: []Method{{Name: "a"}}, Tasks: []Task{{Env: "Nope-v1", Budget: 1}}, Seeds: "1"},                           // unknown task
		{Out: "o", Methods: []Method{{Name: "a"}}, Tasks: []Task{{Env: "Hopper-v1", Budget: 1, Runs: map[string]string{"b": "1"}}}},  // unknown method
		{Out: "o", Methods: []Method{{Name: "a", Args: []string{"x\ty"}}}, Tasks: []Task{{Env: "Hopper-v1", Budget: 1}}, Seeds: "1"}, // a tab
		{Out: "o", Methods: []Method{{Name: "a"}}, Tasks: []Task{{Env: "Hopper-v1", Budget: 0}}, Seeds: "1"},                         // no budget
		{Out: "o", Methods: []Method{{Name: "a"}}, Tasks: []Task{{Env: "Hopper-v1", Budget: 1, Fallback: true}}, Seeds: "1"},         // a table task as fallback
	} {
		if err := m.check(); err == nil {
			t.Errorf("%+v: no error", m)
		}
	}
	ok := Matrix{Out: "o", Methods: []Method{{Name: "a"}}, Tasks: []Task{{Env: "Reacher-v5", Budget: 1, Fallback: true}}, Seeds: "1"}
	if err := ok.check(); err != nil {
		t.Errorf("an env outside the table, marked fallback: %v", err)
	}
}
