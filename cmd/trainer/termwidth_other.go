//go:build !unix

package main

import "os"

// ttyColumns is 0 where the trainer cannot ask the terminal its width:
// termWidth then takes $COLUMNS, else 80.
func ttyColumns(*os.File) int { return 0 }
