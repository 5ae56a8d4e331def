package main

import (
	"context"
	"errors"
	"io"
)

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error   { return errors.New("todo") }
func runPlot(ctx context.Context, args []string, stdout, stderr io.Writer) error   { return errors.New("todo") }
func runTable(ctx context.Context, args []string, stdout, stderr io.Writer) error  { return errors.New("todo") }
func runConvex(ctx context.Context, args []string, stdout, stderr io.Writer) error { return errors.New("todo") }
