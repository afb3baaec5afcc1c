package main

import (
	"strings"
	"testing"
)

func TestDecodeRequest(t *testing.T) {
	pod := `{"metadata":{"name":"p","namespace":"default","uid":"u1"},"spec":{"containers":[{"name":"c"}],"initContainers":[{"name":"i"}]}}`
	for _, tc := range []struct {
		name, line, wantErr string
	}{
		{"prepare", `{"id":1,"op":"prepare","pod":` + pod + `}`, ""},
		{"resources of an init container", `{"id":2,"op":"resources","pod":` + pod + `,"container":"i"}`, ""},
		{"reconcile", `{"id":3,"op":"reconcile","activePods":["u1"]}`, ""},
		{"not JSON", `{`, "request is not JSON"},
		{"no id", `{"op":"ping"}`, "no positive id"},
		{"no op", `{"id":4}`, "no op"},
		{"unknown op", `{"id":5,"op":"dance"}`, `unknown op "dance"`},
		{"prepare without pod", `{"id":6,"op":"prepare"}`, "prepare needs a pod"},
		{"resources without container", `{"id":7,"op":"resources","pod":` + pod + `}`, "needs a pod and a container"},
		{"unknown container", `{"id":8,"op":"resources","pod":` + pod + `,"container":"x"}`, `pod p has no container "x"`},
		{"mightNeed without uid", `{"id":9,"op":"mightNeedUnprepare"}`, "needs a podUID"},
		{"plugins", `{"id":10,"op":"plugins"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := decodeRequest([]byte(tc.line))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if req.ID == 0 || req.Op == "" {
					t.Fatalf("request not decoded: %+v", req)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestDecodedPodKeepsUIDAndClaims(t *testing.T) {
	line := `{"id":1,"op":"prepare","pod":{"metadata":{"name":"p","uid":"u1"},"spec":{"resourceClaims":[{"name":"gpu","resourceClaimName":"c1"}],"containers":[{"name":"c"}]}}}`
	req, err := decodeRequest([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if req.Pod.UID != "u1" || len(req.Pod.Spec.ResourceClaims) != 1 || *req.Pod.Spec.ResourceClaims[0].ResourceClaimName != "c1" {
		t.Fatalf("pod decoded wrongly: %+v", req.Pod)
	}
}

func TestCaptureSinkNotesPodErrors(t *testing.T) {
	log := &failureLog{failed: map[string]string{}}
	sink := &captureSink{base: nopSink{}, log: log}
	sink.WithName("dra-manager").Info(0, "failed", "podUID", "u1", "err", errString("boom"))
	sink.Info(0, "other", "podUID", "u2")
	if len(log.failed) != 1 || log.failed["u1"] != "boom" {
		t.Fatalf("noted %v", log.failed)
	}
}
