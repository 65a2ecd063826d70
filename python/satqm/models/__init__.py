"""Analytical models and design rules from the satqm papers (numpy/scipy only).

Submodules
----------
tcp
    Mathis and Padhye TCP throughput formulas; slow-start loss arithmetic of
    paper 004 (Jou, Tan, Baras), Section II.
avq
    Kunniyur-Srikant AVQ linearisation and the design rule for ``alpha``
    (paper 002, Theorem 1, eq. (6)).
pi
    Hollot et al. PI AQM design rule, discretisation to ``(a, b)``, ITSE and a
    Nelder-Mead tuner (paper 001, eq. (1)).
fluid
    Misra-Gong-Towsley TCP/AQM fluid model with RED, PI, AVQ, fixed-``p`` and
    drop-tail closures; batched fixed-step integrator.
avqred_ode
    The AVQRED chapter's gateway model (paper 000, Section 8, eqs. (1)-(5)):
    offered load, transmit queue behind the PEP delay, virtual queue, RED
    average, marking probability; Fourier series fitted to measured series.
atsp
    The steady state of ATSP (paper 001, eqs. 2-7): marking probability,
    window and queue of N identical senders behind an AQM.
parallel_vq
    Paper 004, Section VI: drop-tail service rate and delay bound, Lindley map,
    stability bounds, Markov chain and Gaussian queue distributions.

Nothing here shares code with the packet simulator; ``simulate_fluid`` uses
the compiled fluid kernel when it is built (the numpy reference otherwise,
or on request). Equations, units and every
interpretation of garbled paper text are documented in ``docs/models.md``.
"""

from .avq import (
    AvqLinearization,
    avq_alpha_max,
    avq_characteristic,
    avq_crossover_frequency,
    avq_is_stable,
    avq_linear_response,
    avq_linearize,
    avq_max_delay,
    avq_min_users,
    avq_stability_margin,
)
from .avqred_ode import (
    CHAPTER_PARAMETERS,
    SAMPLE_COLUMNS,
    AvqredOdeResult,
    FourierSeries,
    GatewaySeries,
    avqred_ode_equilibrium,
    fit_fourier,
    fit_gateway_series,
    gateway_samples_from_results,
    offered_load_equilibrium,
    read_gateway_samples,
    simulate_avqred_ode,
)
from .fluid import (
    FluidResult,
    avq_fluid_equilibrium,
    fixed_p_equilibrium,
    pi_equilibrium,
    red_drop_probability,
    red_equilibrium,
    simulate_fluid,
)
from .parallel_vq import (
    advance_distribution,
    droptail_delay_lower_bound,
    droptail_service_rate,
    flow_rates,
    gaussian_queue_approximation,
    gaussian_queue_pmf,
    iterate_lindley,
    lindley_equilibrium,
    lindley_map,
    lindley_map_derivative,
    lindley_map_second_derivative,
    lindley_step,
    max_stable_update_interval,
    monotone_update_interval,
    noise_std,
    peak_rate_condition,
    red_tail_service_rates,
    round_trip_time,
    stationary_distribution,
    transition_matrix,
)
from .pi import (
    PIDesign,
    PITuneResult,
    fluid_pi_simulator,
    itse,
    pi_ab_to_gains,
    pi_design,
    pi_discretize,
    pi_gains_to_ab,
    pi_loop_response,
    pi_phase_margin,
    tcp_plant_gain,
    tcp_plant_poles,
    tcp_plant_response,
    tune_pi_itse,
)
from .tcp import (
    mathis_constant,
    mathis_throughput,
    padhye_expected_window,
    padhye_f,
    padhye_throughput,
    padhye_throughput_approx,
    padhye_timeout_probability,
    prob_loss_in_first_packets,
    prob_loss_in_round,
    prob_loss_within_rounds,
    prob_multiple_losses,
    slow_start_loss_reaction,
    slow_start_packets_sent,
    slow_start_round,
)

__all__ = [
    # tcp
    "mathis_constant",
    "mathis_throughput",
    "padhye_expected_window",
    "padhye_f",
    "padhye_throughput",
    "padhye_throughput_approx",
    "padhye_timeout_probability",
    "prob_loss_in_first_packets",
    "prob_loss_in_round",
    "prob_loss_within_rounds",
    "prob_multiple_losses",
    "slow_start_loss_reaction",
    "slow_start_packets_sent",
    "slow_start_round",
    # avq
    "AvqLinearization",
    "avq_alpha_max",
    "avq_characteristic",
    "avq_crossover_frequency",
    "avq_is_stable",
    "avq_linear_response",
    "avq_linearize",
    "avq_max_delay",
    "avq_min_users",
    "avq_stability_margin",
    # pi
    "PIDesign",
    "PITuneResult",
    "fluid_pi_simulator",
    "itse",
    "pi_ab_to_gains",
    "pi_design",
    "pi_discretize",
    "pi_gains_to_ab",
    "pi_loop_response",
    "pi_phase_margin",
    "tcp_plant_gain",
    "tcp_plant_poles",
    "tcp_plant_response",
    "tune_pi_itse",
    # fluid
    "FluidResult",
    "avq_fluid_equilibrium",
    "fixed_p_equilibrium",
    "pi_equilibrium",
    "red_drop_probability",
    "red_equilibrium",
    "simulate_fluid",
    # avqred_ode
    "AvqredOdeResult",
    "CHAPTER_PARAMETERS",
    "FourierSeries",
    "GatewaySeries",
    "SAMPLE_COLUMNS",
    "avqred_ode_equilibrium",
    "fit_fourier",
    "fit_gateway_series",
    "gateway_samples_from_results",
    "offered_load_equilibrium",
    "read_gateway_samples",
    "simulate_avqred_ode",
    # parallel_vq
    "advance_distribution",
    "droptail_delay_lower_bound",
    "droptail_service_rate",
    "flow_rates",
    "gaussian_queue_approximation",
    "gaussian_queue_pmf",
    "iterate_lindley",
    "lindley_equilibrium",
    "lindley_map",
    "lindley_map_derivative",
    "lindley_map_second_derivative",
    "lindley_step",
    "max_stable_update_interval",
    "monotone_update_interval",
    "noise_std",
    "peak_rate_condition",
    "red_tail_service_rates",
    "round_trip_time",
    "stationary_distribution",
    "transition_matrix",
]
