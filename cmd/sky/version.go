package main

import (
	"context"
	"fmt"
	"runtime/debug"
)

// version is the release of this sky; builds may set it with -ldflags.
var version = "0.1.0-dev"

func init() {
	register(&command{
		name:    "version",
		usage:   "sky version",
		summary: "print the sky version",
		run: func(_ context.Context, _ []string, s streams) int {
			goVersion := "unknown"
			if bi, ok := debug.ReadBuildInfo(); ok {
				goVersion = bi.GoVersion
			}
			fmt.Fprintf(s.stdout, "sky %s (Sky Durable, %s)\n", version, goVersion)
			return exitOK
		},
	})
}
