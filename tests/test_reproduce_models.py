"""`satqm reproduce models`: the design rules feed the scenarios, and a tiny
run writes every file with the agreement table's columns."""

from __future__ import annotations

import pandas as pd
import pytest
import satqm
from satqm.experiments import models
from satqm.models import avq_alpha_max, pi_design, pi_discretize
from satqm.sweep.canonical_toml import dumps

# The dumbbell by hand: 10 Mbit/s of 1,000-byte packets, 30 flows,
# round trip 2 x (5 + 115 + 5) ms.
C, N, TP = 1250.0, 30, 0.25


def test_pi_gains_are_the_design_rule():
    aqm = models.dumbbell_scenario("pi")["aqm"][0]
    a, b = pi_discretize(pi_design(C, N, TP + models.Q_REF / C), models.PI_FS)
    assert aqm["kind"] == "pi"
    assert aqm["a"] == a and aqm["b"] == b
    assert aqm["sample_rate"] == models.PI_FS and aqm["q_ref"] == models.Q_REF


def test_avq_alpha_is_below_the_theorem_1_bound():
    aqm = models.dumbbell_scenario("avq")["aqm"][0]
    alpha_max = avq_alpha_max(C=C, gamma=models.GAMMA, d=TP + models.Q_REF / C, N=N)
    assert aqm["alpha"] == pytest.approx(models.ALPHA_FRACTION * alpha_max, rel=1e-12)
    assert aqm["alpha"] < alpha_max
    d = models.dumbbell_design()
    assert (d.N, d.C, d.Tp, d.buffer) == (N, pytest.approx(C), pytest.approx(TP), 600.0)


@pytest.mark.parametrize("aqm", ["pi", "avq"])
def test_built_scenarios_are_valid(aqm):
    s = satqm.Scenario.from_toml(dumps(models.dumbbell_scenario(aqm, 10.0, 2.0)))
    assert s.duration == 10.0 and s.flows == N


def test_quantities_are_read_by_the_core_parser_and_name_their_key():
    red_s, avqred_s = models.default_gateway_scenarios()
    red_s["topology"]["downlink"]["rate"] = "3 furlongs"
    with pytest.raises(satqm.ConfigError, match=r"^topology\.downlink\.rate: unknown unit"):
        models.gateway_ode_parameters(red_s, avqred_s)
    red_s["topology"]["downlink"]["rate"] = 20e6
    with pytest.raises(
        satqm.ConfigError, match=r'^topology\.downlink\.rate: 20000000 has no unit; write "20 Mbps"'
    ):
        models.gateway_ode_parameters(red_s, avqred_s)
    d = models.dumbbell_data()
    d["topology"]["access"]["delay"] = {"min": "5 ms", "max": "5 parsecs"}
    with pytest.raises(satqm.ConfigError, match=r"^topology\.access\.delay\.max: unknown unit"):
        models.dumbbell_design(d)


def test_gateway_ode_parameters_from_the_packaged_scenarios():
    red_s, avqred_s = models.default_gateway_scenarios()
    p = models.gateway_ode_parameters(red_s, avqred_s)
    red, avqred = p["red"], p["avqred"]
    # chapter set: 1,400-byte packets (mss 1360), 400 connections, RTT 40-80 ms
    assert red["m"] == 400 and red["R"] == pytest.approx(0.060)
    assert red["mu"] == pytest.approx(20e6 / 8 / 1400) and red["buffer"] == 200
    assert (red["min_th"], red["max_th"], red["w_q"], red["max_p"]) == (60, 120, 0.1, 0.7)
    assert avqred["tau"] == 1.0 and "max_p" not in avqred
    # the defaults are copies: changing one does not change the next
    red_s["simulation"]["duration"] = "1 s"
    assert models.default_gateway_scenarios()[0]["simulation"]["duration"] != "1 s"


def test_gateway_ode_parameters_from_files(tmp_path):
    from satqm.sweep.canonical_toml import dumps

    red_s, avqred_s = models.default_gateway_scenarios()
    avqred_s["aqm"][0]["min_capacity"] = avqred_s["aqm"][0]["max_capacity"] = "19.6 Mbps"
    (tmp_path / "red.toml").write_text(dumps(red_s))
    (tmp_path / "avqred.toml").write_text(dumps(avqred_s))
    p = models.gateway_ode_parameters(tmp_path / "red.toml", tmp_path / "avqred.toml")
    assert p["avqred"]["tau"] == pytest.approx(0.98)
    del red_s["aqm"]
    (tmp_path / "red.toml").write_text(dumps(red_s))
    with pytest.raises(ValueError, match="red.toml: no \\[\\[aqm\\]\\] of kind 'red'"):
        models.gateway_ode_parameters(tmp_path / "red.toml", tmp_path / "avqred.toml")


def test_models_tiny(tmp_path):
    report = models.reproduce(tmp_path, settings=models.tiny_settings(), workers=2)
    text = report.read_text()
    for f in (
        "agreement.csv",
        "agreement.md",
        "design.json",
        "dumbbell_runs.csv",
        "fig_fluid_dumbbell.png",
        "fig_avqred_ode.png",
        "fig_gateway_series.png",
        "gateway_samples.csv",
        "gateway_series.json",
    ):
        assert (tmp_path / f).exists(), f
    df = pd.read_csv(tmp_path / "agreement.csv")
    assert tuple(df.columns) == models.AGREEMENT_COLUMNS
    assert set(df.part) == {"fluid-dumbbell", "avqred-ode-gateway", "pvq-fig21"}
    fig21 = df[df.part == "pvq-fig21"]
    assert set(fig21.aqm) == {
        f"red_tail-N{n}-{d}" for n in (20, 40) for d in ("markov_chain", "gaussian")
    }
    assert (tmp_path / "fig21" / "fig21.png").exists()
    assert "](fig21/fig21.png)" in text and "### Parallel virtual queues" in text
    fluid = df[df.part == "fluid-dumbbell"]
    assert set(fluid.aqm) == {"pi", "avq"}
    assert set(fluid.quantity) == {"queue_mean", "queue_std", "utilization", "marking"}
    gw = df[df.part == "avqred-ode-gateway"]
    assert {"red", "avqred", "avqred-vs-red"} == set(gw.aqm)
    assert df.model.notna().all() and df.simulation.notna().all()
    assert "## 3. Parallel-VQ paper, Fig. 21" in text
    # Three verdicts (PI at q_ref; AVQRED's queue in the ODE and the packet
    # runs), each with its criterion.
    verdicts = [
        line for line in text.splitlines()
        if line.startswith(("- **holds**", "- **not reproduced**", "- **does not hold**"))
    ]
    assert len(verdicts) == 3 and all(" (criterion: " in line for line in verdicts)
    # The measured series can be given instead: the runs are kept, not redone.
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "runs").glob("*/summary.json")}
    out2 = tmp_path / "given"
    out2.mkdir()
    for p in (tmp_path / "runs").iterdir():
        (out2 / "runs").mkdir(exist_ok=True)
        (out2 / "runs" / p.name).symlink_to(p)
    models.reproduce(
        out2,
        settings=models.tiny_settings(),
        workers=1,
        gateway_samples=tmp_path / "gateway_samples.csv",
    )
    assert "given to the reproduction" in (out2 / "REPORT.md").read_text()
    after = {p: p.stat().st_mtime_ns for p in (tmp_path / "runs").glob("*/summary.json")}
    assert before == after


def test_missing_gateway_scenarios_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="none.toml"):
        models.reproduce(
            tmp_path,
            settings=models.tiny_settings(),
            workers=1,
            red_scenario=tmp_path / "none.toml",
        )
