// Command kubelet is drasim's upstream kubelet: upstream's DRA manager
// (k8s.io/kubernetes/pkg/kubelet/cm/dra) and plugin manager
// (k8s.io/kubernetes/pkg/kubelet/pluginmanager) linked into a small program that drasim
// drives over a JSON-lines control protocol on stdin/stdout (see protocol.go). Pod
// lifecycle above the DRA manager stays drasim's. Logs go to stderr.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/metrics"
	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
	"k8s.io/kubernetes/pkg/kubelet/cm/dra"
	kubeletmetrics "k8s.io/kubernetes/pkg/kubelet/metrics"
	"k8s.io/kubernetes/pkg/kubelet/pluginmanager"
)

// startErrorPrefix starts the stderr line that says why the manager did not start.
const startErrorPrefix = "drasim-start-error: "

// never is the reconcile period handed to upstream: drasim runs every pass itself.
const never = 1000 * time.Hour

type options struct {
	stateDir    string
	registryDir string
	kubeconfig  string
	nodeName    string
	callTimeout time.Duration
	wipingDelay time.Duration
	// checkpointBytes: checkpoint events carry the file's bytes (else only its size).
	checkpointBytes bool
}

// kubelet is the running program: the DRA manager and what drasim needs around it.
type kubelet struct {
	opts    options
	ctx     context.Context
	cancel  context.CancelFunc
	client  kubernetes.Interface
	manager *dra.Manager
	metrics metrics.KubeRegistry

	// ready is what the manager's sourcesReady reports: true only during a pass drasim runs.
	ready      atomic.Bool
	reconciles sync.Mutex
	activeMu   sync.Mutex
	active     []*v1.Pod

	plugins pluginmanager.PluginManager

	driversMu     sync.Mutex
	drivers       map[string]map[string]bool // driver name -> registered endpoints
	registrations map[string]int             // driver name -> successful registrations so far
	versions      map[string][]string        // driver name + "\x00" + endpoint -> supported versions it registered with

	outMu sync.Mutex
	out   *json.Encoder
}

func main() {
	fs := flag.NewFlagSet("kubelet", flag.ExitOnError)
	var opts options
	fs.StringVar(&opts.stateDir, "state-dir", "", "directory of dra_manager_state (required)")
	fs.StringVar(&opts.registryDir, "plugins-registry", "", "the plugin registration directory to watch (required)")
	fs.StringVar(&opts.kubeconfig, "kubeconfig", "", "kubeconfig of the API server (required)")
	fs.StringVar(&opts.nodeName, "node-name", "", "this node's name (required)")
	fs.DurationVar(&opts.callTimeout, "call-timeout", 0, "gRPC call timeout for drivers that set none (0: upstream's default)")
	fs.BoolVar(&opts.checkpointBytes, "checkpoint-bytes", false, "report the checkpoint file's bytes after each write (else its size)")
	fs.DurationVar(&opts.wipingDelay, "wiping-delay", 0, "delay before a gone driver's ResourceSlices are deleted (0: upstream's default)")
	klog.InitFlags(fs)
	_ = fs.Parse(os.Args[1:])
	for name, value := range map[string]string{"state-dir": opts.stateDir, "plugins-registry": opts.registryDir, "kubeconfig": opts.kubeconfig, "node-name": opts.nodeName} {
		if value == "" {
			fmt.Fprintf(os.Stderr, "kubelet: --%s is required\n", name)
			os.Exit(2)
		}
	}
	k, err := start(opts, os.Stdout)
	if err != nil {
		// drasim reads this line to report why the kubelet refused to start.
		fmt.Fprintf(os.Stderr, "%s%v\n", startErrorPrefix, err)
		os.Exit(1)
	}
	k.serve(os.Stdin)
}

// start creates and starts the DRA manager and the plugin manager.
func start(opts options, out *os.File) (*kubelet, error) {
	config, err := clientcmd.BuildConfigFromFlags("", opts.kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	// drasim's API server tells its clients apart by user agent (its fault rules name them).
	config.UserAgent = "kubelet"
	// The kubelet's own client limits (KubeletConfiguration kubeAPIQPS and kubeAPIBurst
	// defaults), not client-go's 5 QPS.
	config.QPS = 50
	config.Burst = 100
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	logger := klog.Background()
	ctx = klog.NewContext(ctx, logger)
	k := &kubelet{opts: opts, ctx: ctx, cancel: cancel, client: client,
		drivers: map[string]map[string]bool{}, registrations: map[string]int{}, versions: map[string][]string{},
		out: json.NewEncoder(out)}
	checkpointPath := filepath.Join(opts.stateDir, checkpointFile)
	_, statErr := os.Stat(checkpointPath)
	manager, err := dra.NewManager(logger, client, opts.stateDir)
	if err != nil {
		cancel()
		return nil, err
	}
	k.manager = manager
	// A missing checkpoint is created by NewManager: that is the manager's first write.
	if os.IsNotExist(statErr) {
		if data, err := os.ReadFile(checkpointPath); err == nil {
			k.checkpointWritten(data)
		}
	}
	manager.DrasimReportCheckpointWrites(checkpointPath, k.checkpointWritten)
	manager.DrasimSetReconcilePeriod(never)
	if err := manager.Start(ctx, k.activePods, nodeGetter(k.getNode), readiness{&k.ready}); err != nil {
		cancel()
		return nil, fmt.Errorf("start DRA manager: %w", err)
	}
	if opts.wipingDelay > 0 {
		manager.DrasimSetWipingDelay(opts.wipingDelay)
	}
	k.metrics = metrics.NewKubeRegistry()
	k.metrics.MustRegister(kubeletmetrics.DRAOperationsDuration, kubeletmetrics.DRAGRPCOperationsDuration)
	k.metrics.CustomMustRegister(manager.NewMetricsCollector())

	plugins := pluginmanager.NewPluginManager(opts.registryDir, &record.FakeRecorder{})
	plugins.AddHandler(pluginapi.DRAPlugin, newRegistrationHandler(manager.GetWatcherHandler(), k))
	k.plugins = plugins
	var always atomic.Bool
	always.Store(true)
	go runPluginManager(ctx, plugins, readiness{&always})
	return k, nil
}

// readiness is a config.SourcesReady whose answer drasim sets.
type readiness struct{ flag *atomic.Bool }

func (r readiness) AddSource(string)  {}
func (r readiness) AllReady() bool    { return r.flag.Load() }
func (r readiness) Ready(string) bool { return r.flag.Load() }

func (k *kubelet) activePods() []*v1.Pod {
	k.activeMu.Lock()
	defer k.activeMu.Unlock()
	return k.active
}

func (k *kubelet) getNode(ctx context.Context) (*v1.Node, error) {
	node, err := k.client.CoreV1().Nodes().Get(ctx, k.opts.nodeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: k.opts.nodeName}}, nil
	}
	return node, err
}

// callTimeout is the timeout a registering driver gets when it asked for none.
func (k *kubelet) callTimeout(asked *time.Duration) *time.Duration {
	if asked == nil && k.opts.callTimeout > 0 {
		t := k.opts.callTimeout
		return &t
	}
	return asked
}

// checkpointWritten reports one write of the checkpoint file to drasim (an event line).
func (k *kubelet) checkpointWritten(data []byte) {
	r := reply{Event: eventCheckpoint, Size: len(data)}
	if k.opts.checkpointBytes {
		text := string(data)
		r.Checkpoint = &text
	}
	k.send(r)
}

func (k *kubelet) registered(name, endpoint string, versions []string, err error) {
	if err != nil {
		return
	}
	k.driversMu.Lock()
	defer k.driversMu.Unlock()
	k.versions[name+"\x00"+endpoint] = append([]string{}, versions...)
	if k.drivers[name] == nil {
		k.drivers[name] = map[string]bool{}
	}
	k.drivers[name][endpoint] = true
	k.registrations[name]++
}

func (k *kubelet) deregistered(name, endpoint string) {
	k.driversMu.Lock()
	defer k.driversMu.Unlock()
	delete(k.drivers[name], endpoint)
	if len(k.drivers[name]) == 0 {
		delete(k.drivers, name)
	}
}

// serve answers requests until stdin ends or a stop request arrives.
func (k *kubelet) serve(in *os.File) {
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 64*1024), 64*1024*1024)
	var wg sync.WaitGroup
	for scanner.Scan() {
		req, err := decodeRequest(scanner.Bytes())
		if err != nil {
			k.send(reply{ID: req.ID, ProtocolError: err.Error()})
			continue
		}
		if req.Op == opStop {
			wg.Wait()
			k.stop()
			k.send(reply{ID: req.ID})
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			k.send(k.handle(req))
		}()
	}
	wg.Wait()
	k.stop()
}

func (k *kubelet) stop() {
	k.cancel()
	stopManager(k.manager)
}

func (k *kubelet) send(r reply) {
	k.outMu.Lock()
	defer k.outMu.Unlock()
	if err := k.out.Encode(r); err != nil {
		klog.Background().Error(err, "Writing a reply failed")
	}
}

func (k *kubelet) handle(req request) reply {
	r := reply{ID: req.ID}
	switch req.Op {
	case opPing:
	case opPrepare:
		r.Error = errorText(k.manager.PrepareResources(k.ctx, req.Pod))
	case opUnprepare:
		r.Error = errorText(k.manager.UnprepareResources(k.ctx, req.Pod))
	case opResources:
		info, err := k.manager.GetResources(req.Pod, findContainer(req.Pod, req.Container))
		r.Error = errorText(err)
		if info != nil {
			r.CDIDevices = []string{}
			for _, device := range info.CDIDevices {
				r.CDIDevices = append(r.CDIDevices, device.Name)
			}
		}
		claims, err := k.manager.GetContainerClaimInfos(req.Pod, findContainer(req.Pod, req.Container))
		if err == nil {
			states := make([]any, 0, len(claims))
			for _, claim := range claims {
				states = append(states, claim.ClaimInfoState)
			}
			r.Claims = states
		}
	case opReconcile:
		r.Reconciled = k.reconcile(req.ActivePods)
	case opClaims:
		r.Claims = k.manager.DrasimClaims()
	case opMightNeed:
		might := k.manager.PodMightNeedToUnprepareResources(types.UID(req.PodUID))
		r.Bool = &might
	case opMetrics:
		recorder := httptest.NewRecorder()
		metrics.HandlerFor(k.metrics, metrics.HandlerOpts{}).ServeHTTP(recorder, httptest.NewRequest("GET", "/metrics", nil))
		r.Text = recorder.Body.String()
	case opDrivers:
		k.driversMu.Lock()
		r.Drivers = []string{}
		for name := range k.drivers {
			r.Drivers = append(r.Drivers, name)
		}
		r.Registrations = make(map[string]int, len(k.registrations))
		for name, n := range k.registrations {
			r.Registrations[name] = n
		}
		k.driversMu.Unlock()
		sort.Strings(r.Drivers)
	case opPlugins:
		k.driversMu.Lock()
		r.Plugins = pluginSockets(pluginmanager.DrasimState(k.plugins), k.versions)
		k.driversMu.Unlock()
	}
	return r
}

// reconcile runs one pass of upstream's reconcile loop with the given pods active and
// returns, for every inactive pod the cache referenced, the error the pass logged for it
// (nil when its claims were unprepared).
func (k *kubelet) reconcile(activeUIDs []string) map[string]*string {
	k.reconciles.Lock()
	defer k.reconciles.Unlock()
	active := make(map[string]bool, len(activeUIDs))
	pods := make([]*v1.Pod, 0, len(activeUIDs))
	for _, uid := range activeUIDs {
		active[uid] = true
		pods = append(pods, &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)}})
	}
	outcome := map[string]*string{}
	for _, claim := range k.manager.DrasimClaims() {
		for uid := range claim.State.PodUIDs {
			if !active[uid] {
				outcome[uid] = nil
			}
		}
	}
	k.activeMu.Lock()
	k.active = pods
	k.activeMu.Unlock()
	failures := &failureLog{failed: map[string]string{}}
	logger := klog.Background()
	ctx := klog.NewContext(k.ctx, logger.WithSink(&captureSink{base: logger.GetSink(), log: failures}))
	k.ready.Store(true)
	k.manager.DrasimReconcileNow(ctx)
	k.ready.Store(false)
	failures.mu.Lock()
	defer failures.mu.Unlock()
	for uid, text := range failures.failed {
		t := text
		outcome[uid] = &t
	}
	return outcome
}
