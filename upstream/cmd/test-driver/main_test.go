package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/kubernetes/test/e2e/dra/test-driver/app"
)

func TestWithSubcommand(t *testing.T) {
	cases := map[string]struct{ in, want []string }{
		"nothing":       {nil, []string{"kubelet-plugin"}},
		"flags only":    {[]string{"-v=4", "--node-name", "n"}, []string{"kubelet-plugin", "-v=4", "--node-name", "n"}},
		"given":         {[]string{"-v=4", "kubelet-plugin"}, []string{"-v=4", "kubelet-plugin"}},
		"help stays":    {[]string{"--help"}, []string{"--help"}},
		"help command":  {[]string{"help"}, []string{"help"}},
		"completion":    {[]string{"completion", "bash"}, []string{"completion", "bash"}},
		"short help":    {[]string{"-h"}, []string{"-h"}},
		"after a value": {[]string{"--cdi-dir", "/x"}, []string{"kubelet-plugin", "--cdi-dir", "/x"}},
	}
	for name, c := range cases {
		if got := withSubcommand(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: withSubcommand(%q) = %q, want %q", name, c.in, got, c.want)
		}
	}
}

func TestCheckLoopback(t *testing.T) {
	for _, ok := range [][]string{
		nil,
		{"--http-endpoint=127.0.0.1:8080"},
		{"--http-endpoint", "[::1]:9"},
		{"--http-endpoint=localhost:1"},
		{"--http-endpoint="},
	} {
		if err := checkLoopback(ok); err != nil {
			t.Errorf("checkLoopback(%q): %v", ok, err)
		}
	}
	for _, bad := range [][]string{
		{"--http-endpoint=:8080"},
		{"--http-endpoint", "0.0.0.0:8080"},
		{"--http-endpoint=10.0.0.1:80"},
		{"--http-endpoint=nonsense"},
	} {
		if err := checkLoopback(bad); err == nil {
			t.Errorf("checkLoopback(%q): no error", bad)
		}
	}
}

func TestPrepareDefaultsFromTheEnvironment(t *testing.T) {
	env := map[string]string{
		"NODE_NAME":            "node-7",
		"DRASIM_DRIVER_NAME":   "gpu.example.com",
		"DRASIM_REGISTRAR_DIR": "/r",
		"DRASIM_PLUGINS_DIR":   "/p",
		"DRASIM_CDI_DIR":       "/c",
	}
	root := app.NewCommand()
	if err := prepare(root, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	plugin, _, err := root.Find([]string{"kubelet-plugin"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"node-name": "node-7", "plugin-registration-path": "/r", "datadir": "/p", "cdi-dir": "/c",
	}
	for flag, value := range want {
		if got := plugin.Flags().Lookup(flag).Value.String(); got != value {
			t.Errorf("--%s = %q, want %q", flag, got, value)
		}
	}
	if got := root.PersistentFlags().Lookup("drivername").Value.String(); got != "gpu.example.com" {
		t.Errorf("--drivername = %q", got)
	}
}

func TestPrepareCreatesTheDriversDirectory(t *testing.T) {
	dir := t.TempDir()
	root := app.NewCommand()
	if err := prepare(root, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	plugin, _, err := root.Find([]string{"kubelet-plugin"})
	if err != nil {
		t.Fatal(err)
	}
	if plugin.RunE == nil {
		t.Fatal("no RunE")
	}
	// The wrapped RunE creates <datadir>/<drivername>, then runs upstream's, which stops at
	// the missing --node-name before it starts anything. The kubeconfig is only read.
	kubeconfig := filepath.Join(dir, "kubeconfig")
	config := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'http://127.0.0.1:1'}}]\n" +
		"contexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\nusers: [{name: u, user: {}}]\n"
	if err := os.WriteFile(kubeconfig, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)
	root.SilenceUsage = true
	root.SilenceErrors = true
	root.SetArgs([]string{"kubelet-plugin", "--datadir", dir, "--drivername", "d.example.com", "--cdi-dir", filepath.Join(dir, "cdi")})
	err = root.Execute()
	if err == nil || err.Error() != "--node-name not set" {
		t.Fatalf("Execute: %v, want --node-name not set", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "d.example.com")); err != nil {
		t.Fatalf("the driver's directory: %v", err)
	}
}
