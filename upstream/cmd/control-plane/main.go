// Command control-plane runs a real kube-apiserver with an embedded etcd on 127.0.0.1, for
// drasim's kubeconfig backend and as the reference drasim's own HTTP API server is held
// against. It also runs the two controllers a cluster without them would visibly lack (the
// namespace controller, which finishes namespace deletion, and the service account controller,
// which creates each namespace's "default" ServiceAccount that pod admission looks up).
//
// It writes three kubeconfigs into --dir (admin, the driver's ServiceAccount, the node), prints
// one JSON line on stdout when it serves, and stops on SIGTERM or SIGINT.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
	"k8s.io/kubernetes/cmd/kube-apiserver/app/options"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("control-plane", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "data directory (etcd data, certificates, kubeconfigs); created if missing")
	nodeName := fs.String("node-name", "node-1", "the node whose identity (system:node:<name>) node.kubeconfig carries")
	verbosity := fs.Int("v", 0, "kube-apiserver log verbosity (klog -v)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	p, err := newPlan(*dir, *nodeName)
	if err != nil {
		fmt.Fprintf(stderr, "control-plane: %v\n", err)
		return 2
	}
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	_ = klogFlags.Set("v", fmt.Sprint(*verbosity))
	rest.SetDefaultWarningHandler(rest.NoWarnings{})

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := serve(ctx, p, stdout); err != nil {
		fmt.Fprintf(stderr, "control-plane: %v\n", err)
		return 1
	}
	return 0
}

func serve(ctx context.Context, p *plan, stdout io.Writer) error {
	if err := prepareFiles(p); err != nil {
		return err
	}
	etcd, etcdPort, peerPort, err := startEtcd(p)
	if err != nil {
		return err
	}
	defer etcd.Close()
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", etcdPort)

	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listening on 127.0.0.1: %w", err)
	}
	port := listener.Addr().(*net.TCPAddr).Port

	s := options.NewServerRunOptions()
	flags := pflag.NewFlagSet("kube-apiserver", pflag.ContinueOnError)
	for _, set := range s.Flags().FlagSets {
		flags.AddFlagSet(set)
	}
	if err := flags.Parse(p.apiserverFlags(etcdURL)); err != nil {
		return fmt.Errorf("kube-apiserver flags: %w", err)
	}
	if err := s.GenericServerRunOptions.ComponentGlobalsRegistry.Set(); err != nil {
		return err
	}
	s.SecureServing.Listener = listener
	s.SecureServing.BindPort = port

	apiCtx, cancelAPI := context.WithCancel(context.Background())
	defer cancelAPI()
	completed, err := s.Complete(apiCtx)
	if err != nil {
		return fmt.Errorf("kube-apiserver options: %w", err)
	}
	if errs := completed.Validate(); len(errs) != 0 {
		return fmt.Errorf("kube-apiserver options: %v", errs)
	}
	if completed.InformerName == nil {
		name, err := cache.NewInformerName("kube-apiserver")
		if err != nil {
			return err
		}
		completed.InformerName = name
	}
	config, err := app.NewConfig(completed)
	if err != nil {
		return err
	}
	complete, err := config.Complete()
	if err != nil {
		return err
	}
	server, err := app.CreateServerChain(complete)
	if err != nil {
		return err
	}
	prepared, err := server.PrepareRun()
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- prepared.Run(apiCtx) }()

	serverURL := fmt.Sprintf("https://127.0.0.1:%d", port)
	caPEM, err := os.ReadFile(filepath.Join(p.certDir(), "apiserver.crt"))
	if err != nil {
		return fmt.Errorf("reading the serving certificate: %w", err)
	}
	admin := &rest.Config{Host: serverURL, BearerToken: p.AdminToken, TLSClientConfig: rest.TLSClientConfig{CAData: caPEM}, QPS: 100, Burst: 200}
	version, err := waitReady(ctx, admin, done)
	if err != nil {
		cancelAPI()
		<-done
		return err
	}
	controllersDone, err := startControllers(apiCtx, admin)
	if err != nil {
		cancelAPI()
		<-done
		return err
	}
	driverToken, err := bootstrap(ctx, admin)
	if err == nil {
		err = writeKubeconfigs(p, serverURL, caPEM, driverToken)
	}
	if err != nil {
		cancelAPI()
		<-controllersDone
		<-done
		return err
	}
	fmt.Fprintln(stdout, p.readyLine(serverURL, port, etcdURL, etcdPort, peerPort, os.Getpid(), version))

	select {
	case <-ctx.Done():
	case err := <-done:
		return fmt.Errorf("kube-apiserver stopped: %v", err)
	case err := <-etcd.Err():
		return fmt.Errorf("etcd stopped: %v", err)
	}
	cancelAPI()
	<-controllersDone
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("kube-apiserver shutdown: %w", err)
		}
	case <-time.After(60 * time.Second):
		return fmt.Errorf("kube-apiserver did not shut down within 60s")
	}
	return nil
}

func prepareFiles(p *plan) error {
	if err := os.MkdirAll(p.certDir(), 0o700); err != nil {
		return fmt.Errorf("--dir: %w", err)
	}
	if err := os.WriteFile(p.tokenFile(), []byte(p.tokenFileContents()), 0o600); err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	pem, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return err
	}
	return keyutil.WriteKey(p.saKeyFile(), pem)
}

// freePort asks the kernel for a free port on 127.0.0.1 (etcd wants its URLs before it listens).
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func startEtcd(p *plan) (*embed.Etcd, int, int, error) {
	clientPort, err := freePort()
	if err != nil {
		return nil, 0, 0, err
	}
	peerPort, err := freePort()
	if err != nil {
		return nil, 0, 0, err
	}
	cfg := embed.NewConfig()
	cfg.Name = "drasim"
	cfg.Dir = p.etcdDir()
	cfg.LogLevel = "error"
	cfg.UnsafeNoFsync = true // a throw-away test cluster: no fsync, far less disk time
	client := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", clientPort)}
	peer := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", peerPort)}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("starting etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, 0, 0, fmt.Errorf("etcd was not ready within 60s")
	}
	return e, clientPort, peerPort, nil
}
