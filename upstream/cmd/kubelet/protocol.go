package main

import (
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// The control protocol: drasim writes one JSON request per line on stdin and reads one
// JSON reply per request (matched by id) on stdout. Replies can come out of order when
// requests overlap; lines with id 0 are events (a checkpoint write), sent before the reply
// of the operation that caused them. klog writes to stderr only.

// Operations a request can name.
const (
	opPrepare   = "prepare"
	opUnprepare = "unprepare"
	opResources = "resources"
	opReconcile = "reconcile"
	opClaims    = "claims"
	opMightNeed = "mightNeedUnprepare"
	opMetrics   = "metrics"
	opDrivers   = "drivers"
	opPlugins   = "plugins"
	opPing      = "ping"
	opStop      = "stop"
)

// request is one line of input.
type request struct {
	ID        int64   `json:"id"`
	Op        string  `json:"op"`
	Pod       *v1.Pod `json:"pod,omitempty"`
	Container string  `json:"container,omitempty"`
	// ActivePods are the pod UIDs a reconcile pass treats as active.
	ActivePods []string `json:"activePods,omitempty"`
	PodUID     string   `json:"podUID,omitempty"`
}

// reply is one line of output. Error is the error the operation returned, as upstream
// formatted it; ProtocolError means the request itself was wrong.
type reply struct {
	ID            int64              `json:"id"`
	Error         *string            `json:"error,omitempty"`
	ProtocolError string             `json:"protocolError,omitempty"`
	CDIDevices    []string           `json:"cdiDevices,omitempty"`
	Claims        any                `json:"claims,omitempty"`
	Reconciled    map[string]*string `json:"reconciled,omitempty"`
	Bool          *bool              `json:"bool,omitempty"`
	Text          string             `json:"text,omitempty"`
	Drivers       []string           `json:"drivers,omitempty"`
	Registrations map[string]int     `json:"registrations,omitempty"`
	Plugins       []pluginSocket     `json:"plugins,omitempty"`
	// Event names an unsolicited line (ID 0): eventCheckpoint carries Size, the file's size
	// after one write, and with --checkpoint-bytes Checkpoint, its bytes.
	Event      string  `json:"event,omitempty"`
	Checkpoint *string `json:"checkpoint,omitempty"`
	Size       int     `json:"size,omitempty"`
}

// decodeRequest parses and checks one request line.
func decodeRequest(line []byte) (request, error) {
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		return req, fmt.Errorf("request is not JSON: %w", err)
	}
	if req.ID <= 0 {
		return req, fmt.Errorf("request has no positive id")
	}
	switch req.Op {
	case opPrepare, opUnprepare:
		if req.Pod == nil {
			return req, fmt.Errorf("%s needs a pod", req.Op)
		}
	case opResources:
		if req.Pod == nil || req.Container == "" {
			return req, fmt.Errorf("%s needs a pod and a container name", req.Op)
		}
		if findContainer(req.Pod, req.Container) == nil {
			return req, fmt.Errorf("pod %s has no container %q", req.Pod.Name, req.Container)
		}
	case opMightNeed:
		if req.PodUID == "" {
			return req, fmt.Errorf("%s needs a podUID", req.Op)
		}
	case opReconcile, opClaims, opMetrics, opDrivers, opPlugins, opPing, opStop:
	case "":
		return req, fmt.Errorf("request has no op")
	default:
		return req, fmt.Errorf("unknown op %q", req.Op)
	}
	return req, nil
}

// findContainer finds a container or init container of the pod by name.
func findContainer(pod *v1.Pod, name string) *v1.Container {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	return nil
}

// errorText is the reply form of an operation's error.
func errorText(err error) *string {
	if err == nil {
		return nil
	}
	s := err.Error()
	return &s
}
