package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is the release of this sky; builds may set it with -ldflags.
var version = "0.1.0-dev"

func init() {
	register(func() *cobra.Command {
		return &cobra.Command{
			Use:     "version",
			Short:   "print the sky version",
			Example: "  sky version\n  sky --version",
			Args:    cobra.ArbitraryArgs,
			Run: func(cmd *cobra.Command, _ []string) {
				goVersion := "unknown"
				if bi, ok := debug.ReadBuildInfo(); ok {
					goVersion = bi.GoVersion
				}
				fmt.Fprintf(cmd.OutOrStdout(), "sky %s (Sky Durable, %s)\n", version, goVersion)
			},
		}
	})
}
