package main

import (
	"strings"

	"github.com/stpis/stpis/tasks"
)

// suggest returns the candidate nearest to name by edit distance (letters
// compared without case), or "" when none is near: within a third of
// name's length, and at least one edit.
func suggest(name string, candidates []string) string {
	best, bestD := "", max(1, len(name)/3)+1
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(name), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// taskIDs are the env ids of the paper's tasks that the trainer knows
// without asking a bridge: the paper's -v1 names and gymnasium's -v5 ids.
func taskIDs() []string {
	var ids []string
	for _, t := range tasks.All() {
		ids = append(ids, t.Name+"-v1", t.Name+"-v5")
	}
	return ids
}

// misspeltTask returns the task id env is a near miss of (Hoper-v1:
// Hopper-v1; hopper and Hopper, which no gymnasium makes: Hopper-v1), or
// "" when env is a task's id, a module:Id, or near none. It needs no
// bridge: the task table is the trainer's own.
func misspeltTask(env string) string {
	if strings.Contains(env, ":") {
		return ""
	}
	name := tasks.Name(env)
	for _, t := range tasks.All() {
		if !strings.EqualFold(name, t.Name) {
			continue
		}
		switch {
		case name == env:
			// A task's name without a version: gymnasium makes none.
			return tasks.PaperEnv(t.Name)
		case name != t.Name:
			// The right task in the wrong case: the version as given.
			return t.Name + env[len(name):]
		}
		return ""
	}
	return suggest(env, taskIDs())
}
