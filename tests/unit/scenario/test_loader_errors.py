"""Every kind of mistake in a scenario gets its own precise message (file:line:col: path: message)."""

from __future__ import annotations

from pathlib import Path

import pytest

from drasim.errors import ScenarioError
from drasim.scenario import load_paths, load_text


def test_wrong_container_type(problems):
    text = """\
        apiVersion: drasim.dev/v1alpha1
        kind: Scenario
        metadata:
          name: t
          description: d
          tags: {a: 1}
        spec:
          steps: [{reconcile: {}}]
        """
    assert problems(text) == ["s.yaml:6:9: metadata.tags: expected a list of strings, got a mapping"]


def test_missing_required_field(problems):
    text = """\
        apiVersion: drasim.dev/v1alpha1
        kind: Scenario
        metadata: {name: t}
        spec: {steps: [{reconcile: {}}]}
        """
    assert problems(text) == ["s.yaml:3:11: metadata: missing required field 'description' (a string)"]


def test_unknown_step_without_a_close_match_lists_valid_steps(steps_problems):
    (problem,) = steps_problems("- frobnicate: {}\n")
    assert problem.startswith(
        "s.yaml:12:7: spec.steps[0]: unknown step 'frobnicate'. Valid steps: apply, create,"
    )
    assert "expectCalls" in problem


def test_bad_enum_value_suggests_the_closest(steps_problems):
    (problem,) = steps_problems("- fault: {plugin: {rpc: NodePrepareResources, code: UNAVAILBLE}}\n")
    assert problem.startswith(
        "s.yaml:12:57: spec.steps[0].fault.plugin.code: 'UNAVAILBLE' is not a valid value. Valid values: OK, "
    )
    assert problem.endswith("Did you mean 'UNAVAILABLE'?")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("-1", "must be at least 0, got -1"),
        ("ten", "expected an integer, got a string ('ten')"),
        ("1.5", "expected an integer, got a number (1.5)"),
        ("true", "expected an integer, got a boolean (true)"),
        ("9223372037", "must be at most 9223372036, got 9223372037"),
    ],
)
def test_health_timeout_seconds(steps_problems, value, expected):
    step = f"- setDeviceHealth: {{device: gpu-0, health: Unhealthy, timeoutSeconds: {value}}}\n"
    assert steps_problems(step) == [f"s.yaml:12:75: spec.steps[0].setDeviceHealth.timeoutSeconds: {expected}"]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        (
            "message: '', messageContains: ECC",
            "s.yaml:13:21: spec.steps[1].expectHealth: give at most one of 'message' or 'messageContains'",
        ),
        (
            "message: ",
            "s.yaml:13:67: spec.steps[1].expectHealth.message: expected a string; "
            "write message: '' to expect no message",
        ),
        (
            "message: 5",
            "s.yaml:13:68: spec.steps[1].expectHealth.message: expected a string, got an integer (5)",
        ),
        (
            "messageContains: [ECC]",
            "s.yaml:13:76: spec.steps[1].expectHealth.messageContains: expected a string, got a list",
        ),
    ],
)
def test_expect_health_message(steps_problems, fields, expected):
    steps = "- startPod: {name: a, claims: [gpu]}\n"
    steps += f"- expectHealth: {{pod: a, claim: gpu, health: Unknown, {fields}}}\n"
    assert steps_problems(steps) == [expected]


def test_duplicate_scenario_names_across_files(write):
    text = "apiVersion: drasim.dev/v1alpha1\nkind: Scenario\nmetadata: {name: same, description: d}\n"
    text += "spec: {steps: [{reconcile: {}}]}\n"
    first = write(text, "a.yaml")
    second = write(text, "b.yaml")
    with pytest.raises(ScenarioError) as info:
        load_paths([first.parent])
    assert info.value.problems == [
        f"{second}:1:1: metadata.name: duplicate scenario name 'same' (first defined at {first}:1)"
    ]


def test_missing_file(tmp_path):
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ScenarioError) as info:
        load_paths([missing])
    assert info.value.problems == [f"{missing}:1:1: cannot read file: no such file or directory"]


def test_file_that_is_not_utf8(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_bytes(b"kind: Scenario\n\xff\xfe\n")
    with pytest.raises(ScenarioError) as info:
        load_paths([path])
    (problem,) = info.value.problems
    assert problem.startswith(f"{path}:1:1: cannot read file: ")
    assert "utf-8" in problem


def test_yaml_syntax_error_names_its_line(problems):
    text = "apiVersion: drasim.dev/v1alpha1\nkind: Scenario\nmetadata: {name: t\nspec: {}\n"
    (problem,) = problems(text)
    assert problem.startswith("s.yaml:4:5: YAML syntax error: ")


def test_python_tags_are_refused(problems):
    (problem,) = problems("kind: Scenario\nx: !!python/object/apply:os.system [echo]\n")
    assert problem.startswith("s.yaml:2:4: YAML syntax error: ")
    assert "could not determine a constructor" in problem


def test_errors_in_a_later_document_name_it(problems):
    good = "apiVersion: drasim.dev/v1alpha1\nkind: Scenario\nmetadata: {name: a, description: d}\n"
    good += "spec: {steps: [{reconcile: {}}]}\n"
    bad = good.replace("name: a", "name: b").replace("reconcile", "reconcil")
    assert problems(good + "---\n" + bad) == [
        "s.yaml:9:17: spec.steps[0]: unknown step 'reconcil'. Did you mean 'reconcile'?"
    ]


def test_all_problems_are_reported_together(steps_problems):
    found = steps_problems("- restartKublet: {}\n- advanceClock: {secs: 1}\n- stopPod: nobody\n")
    # cross-field checks (the unknown pod) wait until the types are right
    assert [p.split(": ", 2)[1] for p in found] == [
        "spec.steps[0]",
        "spec.steps[1].advanceClock",
        "spec.steps[1].advanceClock",
    ]
    assert "restartKublet" in found[0]
    assert "'secs'" in found[2]


def test_non_string_field_name(steps_problems):
    assert steps_problems("- startPod: {1: a}\n") == [
        "s.yaml:12:17: spec.steps[0].startPod: missing required field 'name' (a string)",
        "s.yaml:12:18: spec.steps[0].startPod: field names must be strings, got an integer (1)",
    ]


def test_missing_manifest_file(problems):
    text = "apiVersion: drasim.dev/v1alpha1\nkind: Scenario\nmetadata: {name: t, description: d}\n"
    text += "spec:\n  objects: [{file: objects/none.yaml}]\n  steps: [{reconcile: {}}]\n"
    assert problems(text) == [
        "s.yaml:5:20: spec.objects[0].file: cannot read 'objects/none.yaml': No such file or directory"
    ]


def test_manifest_without_kind(problems):
    text = "apiVersion: drasim.dev/v1alpha1\nkind: Scenario\nmetadata: {name: t, description: d}\n"
    text += "spec:\n  objects: [{apiVersion: v1, metadata: {name: x}}]\n  steps: [{reconcile: {}}]\n"
    assert problems(text) == ["s.yaml:5:13: spec.objects[0]: a manifest needs 'kind' (a string)"]


def test_recursive_alias_in_a_manifest(problems):
    text = "apiVersion: drasim.dev/v1alpha1\nkind: Scenario\nmetadata: {name: t, description: d}\n"
    text += "spec:\n  objects:\n    - &loop {apiVersion: v1, kind: X, metadata: {name: x}, self: *loop}\n"
    text += "  steps: [{reconcile: {}}]\n"
    assert problems(text) == ["s.yaml:6:7: YAML syntax error: found unconstructable recursive node"]


def test_load_text_raises_with_problems_not_a_traceback():
    with pytest.raises(ScenarioError) as info:
        load_text("kind: [", "x.yaml")
    assert info.value.problems[0].startswith("x.yaml:")
    assert str(info.value) == "\n".join(info.value.problems)


# -- checks across fields ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        (
            "- stopPod: ghost\n",
            "s.yaml:12:16: spec.steps[0].stopPod.pod: pod 'ghost' is not started by an earlier startPod step "
            "(pods so far: none)",
        ),
        (
            "- restartPlugin: {driver: nvidia.com}\n",
            "s.yaml:12:31: spec.steps[0].restartPlugin.driver: unknown driver 'nvidia.com'. "
            "Drivers in this scenario: gpu.example.com",
        ),
        (
            "- expectCalls: {since: later, GetInfo: 1}\n",
            "s.yaml:12:28: spec.steps[0].expectCalls.since: unknown mark 'later': use 'start', 'previous' "
            "or an earlier mark (marks so far: none)",
        ),
        (
            "- restartKubelet: {crashAt: prepare:after-rpc}\n",
            "s.yaml:12:33: spec.steps[0].restartKubelet.crashAt: 'crashAt' needs 'during': "
            "the action that reaches the hook point",
        ),
        (
            "- restartKubelet: {crashAt: 'unprepare:after-rpc', during: {startPod: {name: a}}}\n",
            "s.yaml:12:64: spec.steps[0].restartKubelet.during: 'startPod' cannot reach "
            "'unprepare:after-rpc'; use one of advanceClock, deletePod, reconcile, "
            "startKubelet, stopPod, syncPod",
        ),
        (
            "- parallel: [{reconcile: {}}, {expectNoError: {}}]\n",
            "s.yaml:12:36: spec.steps[0].parallel.steps[1]: 'expectNoError' is an expectation; "
            "a parallel step may contain only actions",
        ),
        (
            "- fault: {}\n",
            "s.yaml:12:14: spec.steps[0].fault: a fault needs exactly one of 'plugin' or 'apiServer'",
        ),
        (
            "- fault: {plugin: {rpc: GetInfo}}\n",
            "s.yaml:12:23: spec.steps[0].fault.plugin: the fault does nothing: give code, error, "
            "missingClaim, unknownUID, nilEntry, hang, block, crash or delay",
        ),
        (
            "- fault: {plugin: {rpc: GetInfo, code: INTERNAL, hang: true}}\n",
            "s.yaml:12:23: spec.steps[0].fault.plugin: choose one of code, error, missingClaim, unknownUID, "
            "nilEntry, hang, block, crash; got code, hang",
        ),
        (
            "- fault: {plugin: {rpc: GetInfo, nilEntry: true}}\n",
            "s.yaml:12:29: spec.steps[0].fault.plugin.rpc: nilEntry applies only to NodePrepareResources "
            "and NodeUnprepareResources",
        ),
        (
            "- startPod: {name: a, expectError: {matches: '(('}}\n",
            "s.yaml:12:50: spec.steps[0].startPod.expectError.matches: invalid regular expression '((': "
            "missing ), unterminated subpattern at position 1",
        ),
        (
            "- expectError: {contains: x, matches: y}\n",
            "s.yaml:12:20: spec.steps[0].expectError: give exactly one of 'contains' or 'matches'",
        ),
        (
            "- startPod: {name: a, claims: [gpu], containers: [{name: c, claims: [gpux]}]}\n",
            "s.yaml:12:73: spec.steps[0].startPod.containers[0].claims: container 'c' uses claim 'gpux', "
            "which the pod does not list (pod claims: gpu)",
        ),
        (
            "- expectMetric: {name: dra_resource_claims_in_use}\n",
            "s.yaml:12:21: spec.steps[0].expectMetric: this expectation checks nothing: "
            "give at least one of its checks",
        ),
        (
            "- mark: start\n",
            "s.yaml:12:13: spec.steps[0].mark.name: mark 'start' is already defined (or reserved)",
        ),
        (
            "- corruptCheckpoint: {mode: checksum, content: x}\n",
            "s.yaml:12:52: spec.steps[0].corruptCheckpoint.content: 'content' is required with mode "
            "'content' and only allowed there",
        ),
    ],
)
def test_cross_field_problem(steps_problems, steps, expected):
    assert steps_problems(steps) == [expected]


def test_driver_must_be_named_when_there_are_two(problems):
    text = """\
        apiVersion: drasim.dev/v1alpha1
        kind: Scenario
        metadata: {name: t, description: d}
        spec:
          drivers:
            - fake: {name: a.example.com}
            - fake: {name: b.example.com}
          steps:
            - killPlugin: {}
        """
    assert problems(text) == [
        "s.yaml:9:19: spec.steps[0].killPlugin: 'driver' must be given: the scenario has 2 drivers "
        "(a.example.com, b.example.com)"
    ]


def test_driver_needs_exactly_one_implementation(problems):
    text = """\
        apiVersion: drasim.dev/v1alpha1
        kind: Scenario
        metadata: {name: t, description: d}
        spec:
          driver: {}
          steps: [{reconcile: {}}]
        """
    assert problems(text) == ["s.yaml:5:11: spec.driver: a driver needs exactly one of 'fake' or 'command'"]


def test_unknown_command_placeholder(problems):
    text = """\
        apiVersion: drasim.dev/v1alpha1
        kind: Scenario
        metadata: {name: t, description: d}
        spec:
          driver:
            command: {name: x.example.com, args: ["./drv", "--node={nod}"]}
          steps: [{reconcile: {}}]
        """
    assert problems(text) == [
        "s.yaml:6:42: spec.driver.command.args: unknown placeholder {nod}. Valid placeholders: {node}, "
        "{kubeconfig}, {registrar_dir}, {plugins_dir}, {plugin_dir}, {cdi_dir}, {state_dir}, {driver_name}"
    ]


def test_invalid_name_and_multiline_description(problems):
    text = """\
        apiVersion: drasim.dev/v1alpha1
        kind: Scenario
        metadata:
          name: Not_Valid
          description: |
            two
            lines
        spec: {steps: [{reconcile: {}}]}
        """
    assert problems(text) == [
        "s.yaml:4:9: metadata.name: 'Not_Valid' is not a valid name: "
        "use lowercase letters, digits, '-' and '.'",
        "s.yaml:5:16: metadata.description: the description must be one non-empty line",
    ]


def test_no_problem_is_a_traceback(tmp_path: Path):
    """A directory mixing broken files still yields only formatted problems."""
    (tmp_path / "a.yaml").write_text("kind: Scenario\nspec: [\n")
    (tmp_path / "b.yml").write_text("kind: Scenario\napiVersion: drasim.dev/v1alpha1\nmetadata: 3\n")
    (tmp_path / "objects.yaml").write_text("kind: ConfigMap\n")  # no Scenario: skipped
    with pytest.raises(ScenarioError) as info:
        load_paths([tmp_path])
    assert [p.split(":")[0] for p in info.value.problems] == [
        str(tmp_path / "a.yaml"),
        str(tmp_path / "b.yml"),
        str(tmp_path / "b.yml"),
    ]
    assert "metadata: expected a mapping (Metadata), got an integer (3)" in info.value.problems[2]


def test_integer_beyond_python_digit_limit(problems):
    huge = "9" * 5000
    (problem,) = problems(f"apiVersion: drasim.dev/v1alpha1\nkind: Scenario\nmetadata: {{name: {huge}}}\n")
    assert problem.startswith("s.yaml:3:18: YAML syntax error: cannot read the integer: Exceeds the limit")


def test_bad_fake_device_name_names_the_field(problems):
    text = """\
    apiVersion: drasim.dev/v1alpha1
    kind: Scenario
    metadata: {name: t, description: A test scenario.}
    spec:
      driver:
        fake: {name: gpu.example.com, devices: [gpu-a, GPU_B]}
      steps:
        - reconcile: {}
    """
    (problem,) = problems(text)
    assert problem.startswith("s.yaml:6:44: spec.driver.fake.devices: 'GPU_B' is not a valid device name")


def test_retry_jitter_is_a_fraction(problems):
    text = """\
    apiVersion: drasim.dev/v1alpha1
    kind: Scenario
    metadata: {name: t, description: A test scenario.}
    spec:
      driver:
        fake: {name: gpu.example.com}
      kubelet: {timers: {retryJitter: 1.5}}
      steps:
        - reconcile: {}
    """
    assert problems(text) == ["s.yaml:7:35: spec.kubelet.timers.retryJitter: must be at most 1, got 1.5"]


def test_expect_pod_must_check_something(steps_problems):
    (problem,) = steps_problems("- startPod: a\n- expectPod: {pod: a}\n")
    assert "this expectation checks nothing" in problem
    assert problem.startswith("s.yaml:13:")


def test_call_count_range_needs_a_sane_bound(steps_problems):
    assert steps_problems("- expectCalls: {NodePrepareResources: {}}\n") == [
        "s.yaml:12:43: spec.steps[0].expectCalls.NodePrepareResources: give atLeast, atMost or both "
        "(or a plain number for an exact count)"
    ]
    (problem,) = steps_problems("- expectCalls: {GetInfo: {atLeast: 3, atMost: 1}}\n")
    assert problem.endswith("GetInfo.atMost: atMost (1) is below atLeast (3)")


def test_unchanged_since_needs_an_earlier_mark(steps_problems):
    (problem,) = steps_problems("- expectResourceSlices: {unchangedSince: later}\n- mark: later\n")
    assert problem.endswith("expectResourceSlices.unchangedSince: unknown mark 'later' (marks so far: none)")


def test_fake_pool_is_refused_rather_than_ignored(problems):
    text = """\
    apiVersion: drasim.dev/v1alpha1
    kind: Scenario
    metadata: {name: t, description: A test scenario.}
    spec:
      driver:
        fake: {name: gpu.example.com, pool: other}
      steps:
        - reconcile: {}
    """
    (problem,) = problems(text)
    assert problem.startswith("s.yaml:6:41: spec.driver.fake.pool: not supported by the fake plugin yet")


# Input (a whole document for ``problems``, YAML under spec.steps for ``steps_problems``)
# -> the one problem it gives.
ONE_PROBLEM = [
    pytest.param(
        "problems",
        "- kind: Scenario\n",
        "s.yaml:1:1: a scenario document must be a mapping, got YList",
        id="document_that_is_not_a_mapping",
    ),
    pytest.param(
        "problems", "# nothing here\n", "s.yaml:1:1: the file holds no YAML document", id="empty_file"
    ),
    pytest.param(
        "problems",
        "apiVersion: drasim.dev/v1alpha1\nkind: Scenaro\n",
        "s.yaml:2:7: kind: unknown kind ('Scenaro'). Expected 'Scenario'. Did you mean 'Scenario'?",
        id="unknown_kind",
    ),
    pytest.param(
        "problems",
        "apiVersion: drasim.dev/v2\nkind: Scenario\n",
        "s.yaml:1:13: apiVersion: unsupported apiVersion ('drasim.dev/v2'). Expected 'drasim.dev/v1alpha1'",
        id="unsupported_api_version",
    ),
    pytest.param(
        "steps_problems",
        "- restartKubelet: {crashAtt: prepare:after-rpc}\n",
        "s.yaml:12:24: spec.steps[0].restartKubelet: unknown field 'crashAtt'. "
        "Valid fields: crashAt, during, downtime, stayDown, version, expectError. Did you mean 'crashAt'?",
        id="unknown_field_suggests_the_closest",
    ),
    pytest.param(
        "steps_problems",
        "- restartKubelet: {grace: 3}\n",
        "s.yaml:12:24: spec.steps[0].restartKubelet: unknown field 'grace'. "
        "Valid fields: crashAt, during, downtime, stayDown, version, expectError.",
        id="unknown_field_without_a_close_match_lists_valid_fields",
    ),
    pytest.param(
        "steps_problems",
        "- {reconcile: {}, stopKubelet: {}}\n",
        "s.yaml:12:7: spec.steps[0]: a step is a mapping with exactly one key, the step name; "
        "got a mapping with 2 keys (reconcile, stopKubelet)",
        id="step_with_two_keys",
    ),
    pytest.param(
        "steps_problems",
        "- reconcile\n",
        "s.yaml:12:7: spec.steps[0]: a step is a mapping with exactly one key, the step name; "
        "got a string ('reconcile')",
        id="step_that_is_not_a_mapping",
    ),
    pytest.param(
        "steps_problems",
        "- advanceClock: [1]\n",
        "s.yaml:12:21: spec.steps[0].advanceClock: expected a mapping (AdvanceClock) or, "
        "as shorthand for 'seconds', a number; got a list",
        id="shorthand_of_the_wrong_shape",
    ),
    pytest.param(
        "steps_problems",
        "- fault: {plugin: {rpc: GetInfo, code: UNAVAILABLE, times: two}}\n",
        "s.yaml:12:64: spec.steps[0].fault.plugin.times: expected an integer, got a string ('two')",
        id="wrong_scalar_type",
    ),
    pytest.param(
        "steps_problems",
        "- advanceClock: {seconds: true}\n",
        "s.yaml:12:31: spec.steps[0].advanceClock.seconds: expected a number, got a boolean (true)",
        id="boolean_is_not_a_number",
    ),
    pytest.param(
        "steps_problems",
        "- restartKublet: {}\n",
        "s.yaml:12:7: spec.steps[0]: unknown step 'restartKublet'. Did you mean 'restartKubelet'?",
        id="unknown_step_suggests_the_closest",
    ),
    pytest.param(
        "steps_problems",
        "- advanceClock: -5\n",
        "s.yaml:12:21: spec.steps[0].advanceClock.seconds: must be at least 0, got -5",
        id="value_below_minimum",
    ),
    pytest.param(
        "steps_problems",
        "- startPod: {name: a, name: b}\n",
        "s.yaml:12:27: duplicate key 'name' (the later value would silently win)",
        id="duplicate_key_in_a_mapping",
    ),
]


@pytest.mark.parametrize(("load", "text", "problem"), ONE_PROBLEM)
def test_bad_input_gives_one_clear_problem(request, load, text, problem):
    assert request.getfixturevalue(load)(text) == [problem]
