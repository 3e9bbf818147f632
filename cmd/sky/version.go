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
			RunE: func(cmd *cobra.Command, args []string) error {
				if len(args) > 0 {
					fmt.Fprintf(cmd.ErrOrStderr(), "sky version: unexpected argument %q; hint: sky version takes no arguments\nusage: sky version\n", args[0])
					return exitCode(exitNoBuild)
				}
				goVersion := "unknown"
				if bi, ok := debug.ReadBuildInfo(); ok {
					goVersion = bi.GoVersion
				}
				fmt.Fprintf(cmd.OutOrStdout(), "sky %s (Sky Durable, %s)\n", version, goVersion)
				return nil
			},
		}
	})
}
