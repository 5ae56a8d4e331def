// Command pygen writes the bridge's copy of the task table
// (tasks.PythonFile) to the file its argument names: `go generate ./tasks`.
package main

import (
	"fmt"
	"os"

	"github.com/stpis/stpis/tasks"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: pygen FILE")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], tasks.PythonFile(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "pygen:", err)
		os.Exit(1)
	}
}
