"""Properties that must hold for every input, checked with hypothesis."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from lecturelib import bayes

# derandomize: the same examples on every run, so a CI failure can be reproduced.
SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


def prob_vectors(min_size=2, max_size=6):
    """Random probability vectors (strictly positive entries, normalised)."""
    return st.integers(min_size, max_size).flatmap(
        lambda n: arrays(np.float64, n, elements=st.floats(0.01, 1.0))
    ).map(lambda v: v / v.sum())


# ---------------------------------------------------------------- bayes


@SETTINGS
@given(prior=prob_vectors(), data=st.data())
def test_posteriors_sum_to_one(prior, data):
    lik = data.draw(arrays(np.float64, (4, prior.size), elements=st.floats(1e-6, 1.0)))
    post = bayes.posterior(lik, prior)
    assert np.allclose(post.sum(axis=1), 1.0)
    assert np.all(post >= 0)
    seq = bayes.incremental_posterior(prior, lik)
    assert np.allclose(seq.sum(axis=1), 1.0)
    assert np.allclose(seq[-1], bayes.posterior(lik.prod(axis=0), prior))


@SETTINGS
@given(counts=arrays(np.int64, st.tuples(st.integers(2, 4), st.integers(2, 6)), elements=st.integers(1, 50)))
def test_joint_table_conditionals_are_distributions(counts):
    t = bayes.JointTable(counts)
    assert np.allclose(t.posterior.sum(axis=0), 1.0)
    assert np.allclose(t.likelihood.sum(axis=1), 1.0)
    assert np.isclose(t.prior.sum(), 1.0) and np.isclose(t.evidence.sum(), 1.0)


@SETTINGS
@given(post=prob_vectors())
def test_zero_one_risk_decision_is_map(post):
    decision = bayes.bayes_risk_decision(post, 1 - np.eye(post.size))
    assert post[decision] >= post.max() - 1e-12  # a MAP class (ties may go either way)
