package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stpis/stpis/tasks"
)

// TestReadmeStartsWithWhatItDoes: the README opens with what the tool does
// and `make run` within its first 20 lines, then a table of what the
// default does on every task of the table, and stays short (issue 53: four
// paragraphs of internals came before the first command).
func TestReadmeStartsWithWhatItDoes(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) > 251 {
		t.Errorf("README.md has %d lines, over 250: the rest belongs in docs/", len(lines)-1)
	}
	first := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "make run") {
			first = i + 1
			break
		}
	}
	if first < 0 || first > 20 {
		t.Errorf("make run is on line %d, want within the first 20", first)
	}
	table := map[string]bool{}
	for _, l := range lines[first:] {
		if strings.HasPrefix(l, "| ") {
			table[strings.TrimSpace(strings.Split(l, "|")[1])] = true
		}
	}
	for _, task := range tasks.All() {
		if !table[tasks.PaperEnv(task.Name)] {
			t.Errorf("the README's table has no row for %s", tasks.PaperEnv(task.Name))
		}
	}
	for _, internal := range []string{"top-b", "Lipschitz", "orthogonal basis"} {
		if i := strings.Index(string(b), internal); i >= 0 && i < strings.Index(string(b), "## What the default does") {
			t.Errorf("the README speaks of %q before its table of what the default does", internal)
		}
	}
}
