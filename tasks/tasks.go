package tasks

import (
	"strconv"
	"strings"
)

// Task holds the facts about one of the paper's control tasks.
type Task struct {
	// Name is the paper's task name: "Hopper".
	Name string
	// K is the paper's number of episodes averaged per evaluated point
	// (section "Continuous control experiments").
	K int
	// Threshold is the paper's reward threshold (Table 2); HasThreshold
	// says whether the paper gives one.
	Threshold    float64
	HasThreshold bool
	// Budget is our default training-episode budget.
	Budget int
	// ObsDim and ActDim are the observation and action sizes of the
	// gymnasium env the paper name runs as (GymnasiumEnv: TASK-v5), for
	// the task list (`trainer envs`) without a bridge; a test holds them
	// to what the bridge makes.
	ObsDim, ActDim int
	// Table2 is the paper's Table 2, episodes to the threshold by method
	// label ("STP_IS adaptive", "ARS V2-t", ...); 0 means N/A (never
	// reached).
	Table2 map[string]int
}

// Table2Methods are the columns of the paper's Table 2 that we reproduce
// figures for (NG-lin and TRPO-nn are left out), in the paper's order.
var Table2Methods = []string{"STP fixed", "STP_IS fixed", "STP adaptive", "STP_IS adaptive", "ARS V1-t", "ARS V2-t"}

func table2(v ...int) map[string]int {
	m := make(map[string]int, len(v))
	for i, x := range v {
		m[Table2Methods[i]] = x
	}
	return m
}

// all is the table, in the row order of the paper's Table 2, then Walker2d
// (which the paper does not run).
var all = []Task{
	{Name: "Swimmer", K: 2, Threshold: 325, HasThreshold: true, Budget: 2000, ObsDim: 8, ActDim: 2,
		Table2: table2(320, 110, 200, 90, 100, 427)},
	{Name: "Hopper", K: 4, Threshold: 3120, HasThreshold: true, Budget: 8000, ObsDim: 11, ActDim: 3,
		Table2: table2(3970, 2400, 3720, 1870, 51840, 1973)},
	{Name: "HalfCheetah", K: 4, Threshold: 3430, HasThreshold: true, Budget: 10000, ObsDim: 17, ActDim: 6,
		Table2: table2(13760, 4420, 5040, 2710, 8106, 1707)},
	{Name: "Ant", K: 40, Threshold: 3580, HasThreshold: true, Budget: 100000, ObsDim: 105, ActDim: 8,
		Table2: table2(107220, 43860, 96980, 26480, 58133, 20800)},
	{Name: "Humanoid", K: 120, Threshold: 6000, HasThreshold: true, Budget: 1000000, ObsDim: 348, ActDim: 17,
		Table2: table2(0, 530200, 0, 296800, 0, 142600)},
	{Name: "Walker2d", K: 4, Budget: 20000, ObsDim: 17, ActDim: 6},
}

// Name returns the task name of an env id: the id without its version
// suffix, so "Hopper-v1" and "Hopper-v5" are both "Hopper". An id without
// a numeric "-vN" suffix is returned as it is.
func Name(env string) string {
	if i := strings.LastIndex(env, "-v"); i > 0 {
		if _, err := strconv.Atoi(env[i+2:]); err == nil {
			return env[:i]
		}
	}
	return env
}

// Lookup returns the facts about env's task (any version of its id).
func Lookup(env string) (Task, bool) {
	name := Name(env)
	for _, t := range all {
		if t.Name == name {
			return t, true
		}
	}
	return Task{}, false
}

// All returns the tasks in the paper's Table 2 order, then Walker2d.
func All() []Task { return append([]Task(nil), all...) }

// PaperK returns the paper's K for env's task, and 4 (its K for the
// middle-sized tasks) for a task the paper does not run.
func PaperK(env string) int {
	if t, ok := Lookup(env); ok {
		return t.K
	}
	return 4
}

// Rank is a task's position in the paper's Table 2 order (unknown tasks
// last), for sorting envs the way the paper lists them.
func Rank(env string) int {
	name := Name(env)
	for i, t := range all {
		if t.Name == name {
			return i
		}
	}
	return len(all)
}

// The env versions of a task: the paper's (gym 0.9 / mujoco-py, which no
// current gymnasium makes) and the gymnasium version a paper name runs as.
const (
	PaperVersion     = "v1"
	GymnasiumVersion = "v5"
)

// PaperEnv is a task's env id in the paper: "Hopper-v1".
func PaperEnv(task string) string { return task + "-" + PaperVersion }

// GymnasiumEnv is the gymnasium id a task's paper env runs as: "Hopper-v5".
func GymnasiumEnv(task string) string { return task + "-" + GymnasiumVersion }
