// Command test-driver runs Kubernetes' own DRA test driver (the kubelet plugin of the e2e
// and e2e_node DRA suites, k8s.io/kubernetes/test/e2e/dra/test-driver/app) as a plain
// process under drasim.
//
// It is the upstream command unchanged, with two conveniences for running it outside a
// cluster: without a sub-command it runs `kubelet-plugin`, and the flags that name the
// node, the driver and the node's directories take their defaults from the environment
// drasim gives a driver command (NODE_NAME, DRASIM_DRIVER_NAME, DRASIM_REGISTRAR_DIR,
// DRASIM_PLUGINS_DIR, DRASIM_CDI_DIR; KUBECONFIG is read by the upstream command itself).
// Flags on the command line win over the environment. The diagnostics HTTP server stays
// off unless --http-endpoint is given, and then it must name a loopback address.
package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/test/e2e/dra/test-driver/app"
)

// envDefaults maps a flag of the kubelet-plugin command (or a persistent flag of the
// root command) to the environment variable its default comes from.
var envDefaults = []struct{ flag, env string }{
	{"node-name", "NODE_NAME"},
	{"drivername", "DRASIM_DRIVER_NAME"},
	{"plugin-registration-path", "DRASIM_REGISTRAR_DIR"},
	{"datadir", "DRASIM_PLUGINS_DIR"},
	{"cdi-dir", "DRASIM_CDI_DIR"},
}

const subcommand = "kubelet-plugin"

func main() {
	cmd := app.NewCommand()
	if err := prepare(cmd, os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "test-driver:", err)
		os.Exit(2)
	}
	args := withSubcommand(os.Args[1:])
	if err := checkLoopback(args); err != nil {
		fmt.Fprintln(os.Stderr, "test-driver:", err)
		os.Exit(2)
	}
	cmd.SetArgs(args)
	os.Exit(cli.Run(cmd))
}

// prepare sets the flag defaults from the environment and makes the kubelet-plugin
// command create the driver's own directory under --datadir before it starts: the
// upstream command creates only --datadir itself and leaves the per-driver directory to
// its deployment (a DaemonSet's host path, or the e2e_node test creating it), so it
// fails to bind its socket where nothing made that directory.
func prepare(root *cobra.Command, getenv func(string) string) error {
	var plugin *cobra.Command
	for _, child := range root.Commands() {
		if child.Name() == subcommand {
			plugin = child
		}
	}
	if plugin == nil {
		return fmt.Errorf("the upstream command has no %q sub-command", subcommand)
	}
	if err := applyEnvDefaults(root, plugin, getenv); err != nil {
		return err
	}
	run := plugin.RunE
	plugin.RunE = func(c *cobra.Command, args []string) error {
		datadir, drivername := c.Flags().Lookup("datadir"), c.Flags().Lookup("drivername")
		if datadir == nil || drivername == nil {
			return fmt.Errorf("the upstream command lacks --datadir or --drivername")
		}
		dir := filepath.Join(datadir.Value.String(), drivername.Value.String())
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return fmt.Errorf("create the driver's directory: %w", err)
		}
		return run(c, args)
	}
	return nil
}

// applyEnvDefaults sets the default of each flag in envDefaults whose variable is set.
func applyEnvDefaults(root, plugin *cobra.Command, getenv func(string) string) error {
	for _, d := range envDefaults {
		value := getenv(d.env)
		if value == "" {
			continue
		}
		f := plugin.Flags().Lookup(d.flag)
		if f == nil {
			f = root.PersistentFlags().Lookup(d.flag)
		}
		if f == nil {
			return fmt.Errorf("the upstream command has no --%s flag", d.flag)
		}
		if err := setDefault(f, value); err != nil {
			return fmt.Errorf("%s=%q: %w", d.env, value, err)
		}
	}
	return nil
}

func setDefault(f *pflag.Flag, value string) error {
	if err := f.Value.Set(value); err != nil {
		return err
	}
	f.DefValue = value
	return nil
}

// withSubcommand inserts kubelet-plugin when no word of args names a sub-command
// (flags and their values only, or nothing at all). Help stays help.
func withSubcommand(args []string) []string {
	for _, arg := range args {
		if arg == subcommand || arg == "help" || arg == "completion" || arg == "-h" || arg == "--help" {
			return args
		}
	}
	return append([]string{subcommand}, args...)
}

// checkLoopback refuses a diagnostics endpoint that would listen beyond this machine.
func checkLoopback(args []string) error {
	for i, arg := range args {
		var value string
		switch {
		case strings.HasPrefix(arg, "--http-endpoint="):
			value = strings.TrimPrefix(arg, "--http-endpoint=")
		case arg == "--http-endpoint" && i+1 < len(args):
			value = args[i+1]
		default:
			continue
		}
		if value == "" {
			continue
		}
		host, _, err := net.SplitHostPort(value)
		if err != nil {
			return fmt.Errorf("--http-endpoint %q: %w", value, err)
		}
		ip := net.ParseIP(host)
		if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return fmt.Errorf("--http-endpoint %q: only a loopback address (127.0.0.1:PORT) is allowed", value)
		}
	}
	return nil
}
