"""Every small data set the course uses, shipped as literals or generated offline.

Nothing here touches the network.  Tables printed in the lecture notes are typed in
as they appear there (with the source noted in each docstring); larger data sets are
the ones that ship with scikit-learn, or synthetic stand-ins generated from a fixed
seed.  Each loader returns plain numpy arrays (or a small dataclass of them).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from ._validation import Elementwise, InstanceOf, Interval, Options, rounding_tolerance, validate_params

__all__ = [
    "bmi_counts", "cancer_test_kit", "fair_or_biased_coin", "die_rolls",
    "coin_population_triplets", "coin_tosses", "three_gaussians", "topic_corpus",
    "svm_blobs_with_outlier", "conic_classes", "planets", "student_grades",
    "pca_exercise_points", "concentric_rings", "elongated_classes", "two_views", "block_affinity",
    "two_groups_and_a_stray_point", "four_concept_table", "rectangle_game_target",
    "cross_points", "breast_cancer_split", "digit_halves", "rendered_characters", "balance_scale",
    "ionosphere_stand_in", "menn_protocol_split",
]

_COUNT = Interval(Integral, 1, None)
_PROBABILITIES = Elementwise(Interval(Real, 0, 1))


def _coin_mixture(weights, p):
    """The mixing weights and head probabilities of a mixture of coins, checked."""
    atol = rounding_tolerance(weights, np.size(weights), floor=1e-12)
    weights, p = np.asarray(weights, dtype=float), np.asarray(p, dtype=float)
    if weights.ndim != 1 or weights.shape != p.shape:
        raise ValueError(f"weights and p need one entry per coin, got shapes {weights.shape} and {p.shape}")
    if not np.isclose(weights.sum(), 1.0, rtol=0, atol=atol):
        raise ValueError(f"weights must sum to 1, got {weights.sum():.6g}")
    if abs(weights.sum() - 1.0) > 1e-12:
        # weights given in a lower precision (float32) sum to one only to that precision;
        # numpy's sampler wants float64's, so they are divided by their float64 sum (a
        # change below the input's own round-off)
        weights = weights / weights.sum()
    return weights, p

# Each chapter keeps its loaders in its own section below; add new loaders inside
# your chapter's section only, so that parallel work on chapters never collides.

# --- Chapter 1: Bayes ---------------------------------------------------------------


def bmi_counts():
    """Hit counts of the BMI example (Shashua's notes, Fig. 1.1).

    Rows are the classes h1 = over-weight and h2 = normal weight; columns are five
    ordered BMI values x1..x5.  22 hits in total.

    Examples
    --------
    >>> from lecturelib.datasets import bmi_counts
    >>> counts = bmi_counts()
    >>> print(counts)
    [[2 5 4 2 1]
     [0 0 3 3 2]]
    >>> int(counts.sum())
    22
    """
    return np.array([[2, 5, 4, 2, 1], [0, 0, 3, 3, 2]])


def cancer_test_kit():
    """The cancer test kit of the notes (credited there to Y. Mansour).

    Returns a dict with ``p_pos_given_cancer`` = 0.98, ``p_pos_given_healthy`` = 0.03
    and the prior ``p_cancer`` = 0.01.

    Examples
    --------
    >>> from lecturelib.bayes import posterior
    >>> from lecturelib.datasets import cancer_test_kit
    >>> kit = cancer_test_kit()
    >>> likelihood = [kit["p_pos_given_cancer"], kit["p_pos_given_healthy"]]
    >>> prior = [kit["p_cancer"], 1 - kit["p_cancer"]]
    >>> print(posterior(likelihood, prior).round(4))
    [0.2481 0.7519]
    """
    return {"p_pos_given_cancer": 0.98, "p_pos_given_healthy": 0.03, "p_cancer": 0.01}


def fair_or_biased_coin():
    """The incremental-Bayes coin of the notes (credited there to R. Rivest).

    Returns a dict: ``p_head`` = (0.5, 0.6) for (fair, biased) and ``prior`` = (0.75, 0.25).

    Examples
    --------
    >>> from lecturelib.datasets import fair_or_biased_coin
    >>> coin = fair_or_biased_coin()
    >>> coin["p_head"], coin["prior"]
    ((0.5, 0.6), (0.75, 0.25))
    """
    return {"p_head": (0.5, 0.6), "prior": (0.75, 0.25)}


# --- end Chapter 1 ---

# --- Chapters 2 and 3: MaxEnt and EM ---------------------------------------------------


def die_rolls():
    """Counts of the faces 1..6 in 20 rolls of a die whose mean is exactly 4.2.

    The empirical distribution is (0.1, 0.1, 0.05, 0.2, 0.35, 0.2); it is one of many
    with mean 4.2 (chapter 2 uses it to show that the ML Gibbs fit depends on the data
    only through the mean).  Returns ``(faces, counts)``.

    Examples
    --------
    >>> from lecturelib.datasets import die_rolls
    >>> faces, counts = die_rolls()
    >>> print(counts, int(counts.sum()))
    [2 2 1 4 7 4] 20
    >>> float(faces @ counts / counts.sum())
    4.2
    """
    return np.arange(1, 7), np.array([2, 2, 1, 4, 7, 4])


@validate_params({"weights": [_PROBABILITIES], "p": [_PROBABILITIES]})
def coin_population_triplets(weights=(0.4, 0.6), p=(0.8, 0.3)):
    """1000 triplets of tosses whose frequencies equal the two-coin model exactly.

    Coin 1 (head probability ``p[0]``) is picked with probability ``weights[0]``, coin 2
    otherwise, and tossed three times; 1 is a head.  With the defaults every cell's
    probability is a multiple of 1/1000 (0.209, 0.101, 0.089, 0.221 for 0..3 heads),
    so the sample *is* the population.  Returns an int array of shape (1000, 3).

    Examples
    --------
    >>> from lecturelib.datasets import coin_population_triplets
    >>> X = coin_population_triplets()
    >>> print(X.shape)
    (1000, 3)
    >>> print(X.mean(axis=0).round(4))
    [0.5 0.5 0.5]
    """
    weights, p = _coin_mixture(weights, p)
    cells = np.array([[a, b, c] for a in (0, 1) for b in (0, 1) for c in (0, 1)])
    heads = cells.sum(axis=1)
    prob = sum(w * q**heads * (1 - q) ** (3 - heads) for w, q in zip(weights, p))
    reps = np.round(prob * 1000).astype(int)
    if reps.sum() != 1000 or not np.allclose(reps / 1000, prob, atol=1e-12):
        raise ValueError("these parameters do not give cell probabilities in steps of 1/1000")
    return np.repeat(cells, reps, axis=0)


@validate_params({
    "n_runs": [_COUNT],
    "n_tosses": [_COUNT],
    "weights": [_PROBABILITIES],
    "p": [_PROBABILITIES],
    "random_state": ["seed"],
})
def coin_tosses(n_runs=2000, n_tosses=3, weights=(0.4, 0.6), p=(0.8, 0.3), random_state=0):
    """Runs of tosses from a mixture of coins (1 = head).

    Returns ``(X, coin)``: the 0/1 matrix of shape (n_runs, n_tosses) and the index of
    the coin used for each run.

    Examples
    --------
    >>> from lecturelib.datasets import coin_tosses
    >>> X, coin = coin_tosses(n_runs=5, random_state=0)
    >>> print(X.shape, coin.shape)
    (5, 3) (5,)
    """
    weights, p = _coin_mixture(weights, p)
    rng = np.random.default_rng(random_state)
    coin = rng.choice(len(weights), size=n_runs, p=weights)
    X = (rng.random((n_runs, n_tosses)) < p[coin][:, None]).astype(int)
    return X, coin


@validate_params({"n_samples": [_COUNT], "random_state": ["seed"]})
def three_gaussians(n_samples=1500, random_state=0):
    """A spherical Gaussian mixture in the plane: centres (0,0), (4,0), (0,4),
    standard deviations 0.5, 1.0, 0.7 and weights 0.3, 0.3, 0.4.

    Returns ``(X, labels, truth)`` with ``truth`` a dict of the generating parameters.

    Examples
    --------
    >>> from lecturelib.datasets import three_gaussians
    >>> X, labels, truth = three_gaussians(n_samples=300)
    >>> print(X.shape, sorted(set(labels.tolist())))
    (300, 2) [0, 1, 2]
    """
    truth = {"weights": np.array([0.3, 0.3, 0.4]),
             "means": np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]]),
             "sigmas": np.array([0.5, 1.0, 0.7])}
    rng = np.random.default_rng(random_state)
    labels = rng.choice(3, size=n_samples, p=truth["weights"])
    X = truth["means"][labels] + truth["sigmas"][labels, None] * rng.normal(size=(n_samples, 2))
    return X, labels, truth


_TOPIC_WORDS = {
    "sport": ["goal", "team", "match", "coach", "league", "score", "player", "season"],
    "kitchen": ["oven", "flour", "butter", "recipe", "sugar", "bake", "salt", "onion"],
    "space": ["orbit", "planet", "rocket", "moon", "star", "comet", "galaxy", "launch"],
}
_SHARED_WORDS = ["new", "time", "day", "great", "year", "people"]


@validate_params({"n_documents": [_COUNT], "n_tokens": [_COUNT], "random_state": ["seed"]})
def topic_corpus(n_documents=60, n_tokens=6000, random_state=0):
    """A bag-of-words corpus drawn from a known aspect (PLSA) model with three topics.

    The vocabulary has 8 words per topic (sport, kitchen, space) and 6 common words
    shared by all topics.  Topic ``j`` puts 85% of its mass on its own words and 15% on
    the shared ones; documents are split evenly between the topics, and each token is
    a (word, document) pair drawn from :math:`P(w,d)=\\sum_j\\lambda_j u_j(w) v_j(d)`.

    Returns a dict with ``counts`` (n_documents, n_words), ``vocabulary``,
    ``topics`` (names), and the true ``weights``, ``topic_word``, ``topic_document``.

    Examples
    --------
    >>> from lecturelib.datasets import topic_corpus
    >>> corpus = topic_corpus()
    >>> print(corpus["counts"].shape, int(corpus["counts"].sum()))
    (60, 30) 6000
    >>> corpus["topics"]
    ['sport', 'kitchen', 'space']
    """
    rng = np.random.default_rng(random_state)
    topics = list(_TOPIC_WORDS)
    vocabulary = [w for t in topics for w in _TOPIC_WORDS[t]] + _SHARED_WORDS
    k, n_words = len(topics), len(vocabulary)
    topic_word = np.zeros((k, n_words))
    for j, t in enumerate(topics):
        own = rng.dirichlet(np.full(8, 5.0)) * 0.85
        topic_word[j, 8 * j: 8 * j + 8] = own
        topic_word[j, 8 * k:] = rng.dirichlet(np.full(len(_SHARED_WORDS), 5.0)) * 0.15
    doc_topic = np.arange(n_documents) % k
    topic_document = np.zeros((k, n_documents))
    for j in range(k):
        members = doc_topic == j
        topic_document[j, members] = rng.dirichlet(np.full(members.sum(), 10.0))
    weights = np.bincount(doc_topic, minlength=k) / n_documents
    joint = np.einsum("j,jw,jd->dw", weights, topic_word, topic_document)
    cells = rng.choice(joint.size, size=n_tokens, p=joint.ravel() / joint.sum())
    counts = np.bincount(cells, minlength=joint.size).reshape(joint.shape)
    return {"counts": counts, "vocabulary": vocabulary, "topics": topics, "weights": weights,
            "topic_word": topic_word, "topic_document": topic_document}


# --- end Chapters 2 and 3 ---

# --- Chapter 4: SVM and kernels ---------------------------------------------------------


@validate_params({"n_per_class": [_COUNT], "seed": ["seed"]})
def svm_blobs_with_outlier(n_per_class=20, seed=0):
    """Two 2-D Gaussian classes and one planted outlier (chapter 4, the soft margin).

    Class -1 is centred at (-1.5, -1), class +1 at (1.5, 1), both with unit variance;
    the last point is a +1 point planted inside class -1, so that no hyperplane
    separates the data and the soft margin must pay for one margin error (the setting
    of the notes' Fig. 4.1).  Returns ``(X, y)`` with ``y`` in {-1, +1}.

    Examples
    --------
    >>> from lecturelib.datasets import svm_blobs_with_outlier
    >>> X, y = svm_blobs_with_outlier(n_per_class=20)
    >>> print(X.shape, sorted(set(y.tolist())))
    (41, 2) [-1.0, 1.0]
    """
    rng = np.random.default_rng(seed)
    neg = rng.normal(size=(n_per_class, 2)) + np.array([-1.5, -1.0])
    pos = rng.normal(size=(n_per_class, 2)) + np.array([1.5, 1.0])
    X = np.vstack([neg, pos, [[-1.2, -0.6]]])
    y = np.r_[-np.ones(n_per_class), np.ones(n_per_class), 1.0]
    return X, y


@validate_params({"n": [_COUNT], "seed": ["seed"]})
def conic_classes(n=150, seed=0):
    """Points in the plane labelled by an ellipse (chapter 4, the degree-2 kernel).

    Uniform points in [-3, 3]^2; label +1 inside the tilted ellipse
    ``x1^2/4 + x2^2 + x1*x2/2 < 1.3`` and -1 outside, with the points too close to the
    boundary (within 0.25 in the level of the quadratic) dropped so that a conic separates
    the classes with a margin.  Returns ``(X, y)``; ``y`` in {-1, +1}.

    Examples
    --------
    >>> from lecturelib.datasets import conic_classes
    >>> X, y = conic_classes(n=150)
    >>> print(X.shape, sorted(set(y.tolist())))
    (150, 2) [-1.0, 1.0]
    """
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(4 * n, 2))
    q = X[:, 0] ** 2 / 4 + X[:, 1] ** 2 + X[:, 0] * X[:, 1] / 2 - 1.3
    keep = np.abs(q) > 0.25
    X, q = X[keep][:n], q[keep][:n]
    return X, np.where(q < 0, 1.0, -1.0)


# --- end Chapter 4 ---

# --- Chapter 5: PCA, LDA, CCA -----------------------------------------------------------


def planets():
    """The nine planets of the representation-learning slides (Sebban & Habrard, PCA).

    Returns ``(names, X, feature_names)``: ``X`` has one row per planet and the columns
    distance to the Sun [AU], equatorial diameter [km] and density [g/cm^3].

    Examples
    --------
    >>> from lecturelib.datasets import planets
    >>> names, X, feature_names = planets()
    >>> print(names[2], X[2].tolist())
    Earth [1.0, 12756.0, 5.52]
    >>> feature_names
    ['distance (AU)', 'diameter (km)', 'density (g/cm3)']
    """
    names = ["Mercury", "Venus", "Earth", "Mars", "Jupiter", "Saturn", "Uranus", "Neptune", "Pluto"]
    X = np.array([
        [0.387, 4878, 5.42], [0.723, 12104, 5.25], [1.000, 12756, 5.52],
        [1.524, 6787, 3.94], [5.203, 142800, 1.31], [9.539, 120660, 0.69],
        [19.18, 51118, 1.29], [30.06, 49528, 1.64], [39.53, 2300, 2.03],
    ])
    return names, X, ["distance (AU)", "diameter (km)", "density (g/cm3)"]


def student_grades():
    """Four students' grades in two exams (the slides' feature-extraction example).

    Returns ``(names, X)`` with ``X`` of shape (4, 2): exam 1, exam 2.

    Examples
    --------
    >>> from lecturelib.datasets import student_grades
    >>> names, X = student_grades()
    >>> print(names)
    ['A', 'B', 'C', 'D']
    >>> print(X)
    [[20. 20.]
     [ 5.  6.]
     [20. 14.]
     [10.  5.]]
    """
    return ["A", "B", "C", "D"], np.array([[20.0, 20.0], [5.0, 6.0], [20.0, 14.0], [10.0, 5.0]])


def pca_exercise_points():
    """The eight 2-D points of the slides' PCA exercise, shape (8, 2).

    Examples
    --------
    >>> from lecturelib.datasets import pca_exercise_points
    >>> X = pca_exercise_points()
    >>> print(X.shape, X.mean(axis=0))
    (8, 2) [5. 5.]
    """
    return np.array([[1, 2], [3, 3], [3, 5], [5, 4], [5, 6], [6, 5], [8, 7], [9, 8]], dtype=float)


@validate_params({
    "n_per_ring": [_COUNT],
    "radii": [Elementwise(Interval(Real, 0, None))],
    "noise": [Interval(Real, 0, None)],
    "random_state": ["seed"],
})
def concentric_rings(n_per_ring=100, radii=(0.0, 1.0, 2.0), noise=0.1, random_state=0):
    """Points on concentric circles with radial Gaussian noise (the kernel-PCA illustration).

    Returns ``(X, y)``: ``X`` of shape (n_per_ring * len(radii), 2) and the ring index ``y``.
    A radius of 0 gives a blob of standard deviation ``noise`` at the origin.

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.datasets import concentric_rings
    >>> X, y = concentric_rings(n_per_ring=100, radii=(1.0, 2.0), noise=0.1)
    >>> radius = np.linalg.norm(X, axis=1)
    >>> means = [round(float(radius[y == k].mean()), 1) for k in (0, 1)]
    >>> print(X.shape, means)
    (200, 2) [1.0, 2.0]
    """
    if np.ndim(radii) != 1:
        raise ValueError(f"radii must be a one-dimensional sequence of radii, got an array "
                         f"of shape {np.shape(radii)}")
    rng = np.random.default_rng(random_state)
    Xs, ys = [], []
    for j, r in enumerate(np.asarray(radii, dtype=float)):
        angle = rng.uniform(0, 2 * np.pi, n_per_ring)
        if r == 0:
            pts = noise * rng.normal(size=(n_per_ring, 2))
        else:
            rad = r + noise * rng.normal(size=n_per_ring)
            pts = np.c_[rad * np.cos(angle), rad * np.sin(angle)]
        Xs.append(pts)
        ys.append(np.full(n_per_ring, j))
    return np.vstack(Xs), np.concatenate(ys)


@validate_params({"n_per_class": [_COUNT], "random_state": ["seed"]})
def elongated_classes(n_per_class=200, random_state=0):
    """Two long, thin parallel classes (the situation of the notes' Fig. 5.1).

    The class centres differ more along the first axis, but the classes overlap there;
    along the second axis they are separated.  Returns ``(X, y)``.

    Examples
    --------
    >>> from lecturelib.datasets import elongated_classes
    >>> X, y = elongated_classes(n_per_class=50)
    >>> print(X.shape, X[y == 0].std(axis=0).round(1))
    (100, 2) [1.9 0.4]
    """
    rng = np.random.default_rng(random_state)
    cov = np.array([[4.0, 0.0], [0.0, 0.15]])
    L = np.linalg.cholesky(cov)
    X0 = rng.normal(size=(n_per_class, 2)) @ L.T + [-1.0, -0.6]
    X1 = rng.normal(size=(n_per_class, 2)) @ L.T + [1.0, 0.6]
    return np.vstack([X0, X1]), np.repeat([0, 1], n_per_class)


#: The loadings of the shared signal on the first view (drawn once, from seed 6) and on
#: the second view, in :func:`two_views`.
TWO_VIEWS_LOADINGS = (np.random.default_rng(6).normal(size=(2, 4)),
                      np.array([[1.0, 0.5], [-0.5, 1.0]]))


@validate_params({"n_samples": [_COUNT], "random_state": ["seed"]})
def two_views(n_samples=500, random_state=0):
    r"""Two views that share a two-dimensional Gaussian signal: :math:`n_a = 4`, :math:`n_b = 2`.

    Each sample draws a signal :math:`z \sim N(0, I_2)` and observes it twice, through
    the loadings :math:`M_a` (2 x 4) and :math:`M_b` (2 x 2) of ``TWO_VIEWS_LOADINGS``:

    .. math:: x_a = M_a^\top z + e_a,\quad e_a \sim N(0, I_4), \qquad
              x_b = M_b^\top z + e_b,\quad e_b \sim N(0, 0.64\, I_2),

    so that the population covariances are :math:`\Sigma_{aa} = M_a^\top M_a + I`,
    :math:`\Sigma_{bb} = M_b^\top M_b + 0.64\, I` and :math:`\Sigma_{ab} = M_a^\top M_b`.
    The chapter predicts the second view from the first with CCA.

    Parameters
    ----------
    n_samples : int >= 1, default=500
    random_state : int or numpy Generator, default=0
        Seed of ``numpy.random.default_rng``; a Generator is used (and advanced) as it is,
        so that a second call with it draws a fresh (test) sample.

    Returns
    -------
    X_a : ndarray of shape (n_samples, 4)
    X_b : ndarray of shape (n_samples, 2)

    See the chapter "PCA, LDA and CCA", section "Predicting one view from the other".

    Examples
    --------
    >>> from lecturelib.datasets import two_views
    >>> X_a, X_b = two_views(100)
    >>> print(X_a.shape, X_b.shape)
    (100, 4) (100, 2)
    """
    mix_a, mix_b = TWO_VIEWS_LOADINGS
    rng = np.random.default_rng(random_state)
    z = rng.normal(size=(n_samples, 2))
    X_a = z @ mix_a + rng.normal(size=(n_samples, 4))
    X_b = z @ mix_b + 0.8 * rng.normal(size=(n_samples, 2))
    return X_a, X_b


# --- end Chapter 5 ---

# --- Chapter 6: clustering --------------------------------------------------------------


@validate_params({"sizes": [Elementwise(_COUNT)]})
def block_affinity(sizes=(4, 5)):
    """The ideal affinity of the notes' spectral-embedding example (section 6.3.2).

    Block diagonal, with an all-ones block per cluster (4 + 5 points by default) and
    zeros across.  Returns ``(K, labels)``.

    Examples
    --------
    >>> from lecturelib.datasets import block_affinity
    >>> K, labels = block_affinity((2, 3))
    >>> print(K)
    [[1. 1. 0. 0. 0.]
     [1. 1. 0. 0. 0.]
     [0. 0. 1. 1. 1.]
     [0. 0. 1. 1. 1.]
     [0. 0. 1. 1. 1.]]
    >>> print(labels)
    [0 0 1 1 1]
    """
    sizes = [int(s) for s in np.ravel(sizes)]
    labels = np.repeat(np.arange(len(sizes)), sizes)
    K = (labels[:, None] == labels[None, :]).astype(float)
    return K, labels


@validate_params({"n_per_group": [_COUNT], "seed": ["seed"]})
def two_groups_and_a_stray_point(n_per_group=10, seed=0):
    """Two tight groups 3 apart plus one point 3.5 to the left of the first group.

    The minimum cut of the RBF affinity (gamma = 0.5) isolates the stray point; the
    normalised cut separates the two groups.  Returns ``(X, groups)`` with
    ``groups`` = 0, 1 for the groups and 2 for the stray point.

    Examples
    --------
    >>> from lecturelib.datasets import two_groups_and_a_stray_point
    >>> X, groups = two_groups_and_a_stray_point(n_per_group=10)
    >>> print(X.shape, [int((groups == g).sum()) for g in (0, 1, 2)])
    (21, 2) [10, 10, 1]
    """
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(0, 0.3, (n_per_group, 2)),
                   rng.normal(0, 0.3, (n_per_group, 2)) + [3.0, 0.0],
                   [[-3.5, 0.0]]])
    groups = np.concatenate([np.zeros(n_per_group, int), np.ones(n_per_group, int), [2]])
    return X, groups


# --- end Chapter 6 ---

# --- Chapters 7-9: PAC, VC, double sampling ------------------------------------------------


def four_concept_table():
    """The finite class of four concepts on three points (Shashua's notes, section 8.1).

    Rows are the concepts c1..c4, columns the points x1..x3; entry 1 means the point
    belongs to the concept.

    Examples
    --------
    >>> from lecturelib.datasets import four_concept_table
    >>> from lecturelib.vc import dichotomies, finite_class
    >>> table = four_concept_table()
    >>> print(table)
    [[1 1 1]
     [0 1 1]
     [1 0 0]
     [0 0 0]]
    >>> len(dichotomies([0, 1, 2], finite_class(table)))
    4
    """
    return np.array([[1, 1, 1], [0, 1, 1], [1, 0, 0], [0, 0, 0]])


def rectangle_game_target():
    """Target rectangle of the chapter 7 simulations: [0.2, 0.7] x [0.1, 0.6] in the unit
    square, with D uniform on [0, 1]^2 (area 0.25).  Returns ``(lower, upper)``.

    Examples
    --------
    >>> from lecturelib.datasets import rectangle_game_target
    >>> lower, upper = rectangle_game_target()
    >>> print(lower, upper)
    [0.2 0.1] [0.7 0.6]
    >>> round(float((upper - lower).prod()), 4)
    0.25
    """
    return np.array([0.2, 0.1]), np.array([0.7, 0.6])


def cross_points():
    """Four points in a cross (a diamond) that axis-aligned rectangles shatter.

    Examples
    --------
    >>> from lecturelib.datasets import cross_points
    >>> from lecturelib.vc import is_shattered
    >>> X = cross_points()
    >>> is_shattered(X, "rectangles")
    True
    """
    return np.array([[0.0, 1.0], [1.0, 0.0], [0.0, -1.0], [-1.0, 0.0]])


# --- end Chapters 7-9 ---

# --- Chapters 10 and 11: subspace bounds, hyperbolic PCA ---------------------------------


@validate_params({"n_train": [Interval(Integral, 1, 568)], "random_state": ["seed"]})
def breast_cancer_split(n_train=400, random_state=0):
    """The breast cancer data, standardised, split at random into training and test points.

    Chapter 10's stand-in for the lecture's Ionosphere data: scikit-learn's Wisconsin
    breast cancer data (569 points, 30 features, 2 classes), every feature scaled to mean
    0 and variance 1 over all 569 points (as the chapter does: only the kernel's scale
    depends on it), then a random permutation's first ``n_train`` points for training and
    the rest for testing.

    Parameters
    ----------
    n_train : int in [1, 568], default=400
    random_state : int or numpy Generator, default=0
        Seed of the permutation.

    Returns
    -------
    X_train : ndarray of shape (n_train, 30)
    X_test : ndarray of shape (569 - n_train, 30)
    y_train, y_test : ndarray of 0/1 labels

    Examples
    --------
    >>> from lecturelib.datasets import breast_cancer_split
    >>> X_train, X_test, y_train, y_test = breast_cancer_split()
    >>> print(X_train.shape, X_test.shape, sorted(set(y_test.tolist())))
    (400, 30) (169, 30) [0, 1]
    """
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    data = load_breast_cancer()
    X = StandardScaler().fit_transform(data.data)
    perm = np.random.default_rng(random_state).permutation(len(X))
    train, test = perm[:n_train], perm[n_train:]
    return X[train], X[test], data.target[train], data.target[test]


@validate_params({"kind": [Options("left-right", "top-bottom")]})
def digit_halves(kind="left-right"):
    """Two views of scikit-learn's 8x8 digits: the two halves of each image.

    Chapter 10 uses them as the two views of KCCA and SVM-2K (stand-ins for the
    lecture's bilingual documents and patents, which are not available offline).

    Parameters
    ----------
    kind : {"left-right", "top-bottom"}

    Returns
    -------
    view_a, view_b : ndarray of shape (1797, 32)
        Pixel intensities in [0, 16] of the left (top) and right (bottom) halves.
    y : ndarray of shape (1797,)

    Examples
    --------
    >>> from lecturelib.datasets import digit_halves
    >>> left, right, y = digit_halves()
    >>> print(left.shape, right.shape, y.shape)
    (1797, 32) (1797, 32) (1797,)
    """
    from sklearn.datasets import load_digits

    d = load_digits()
    img = d.images
    if kind == "left-right":
        a, b = img[:, :, :4], img[:, :, 4:]
    else:  # "top-bottom"
        a, b = img[:, :4, :], img[:, 4:, :]
    n = img.shape[0]
    return a.reshape(n, -1).astype(float), b.reshape(n, -1).astype(float), d.target.copy()


_GLYPH_CACHE = {}


def _glyph(char, size=48):
    """A character rendered in matplotlib's bundled DejaVu Sans, as a size x size array in [0, 1]."""
    key = (char, size)
    if key not in _GLYPH_CACHE:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=(1, 1), dpi=size)
        canvas = FigureCanvasAgg(fig)
        fig.text(0.5, 0.5, char, fontsize=44, family="DejaVu Sans",
                 ha="center", va="center", color="black")
        canvas.draw()
        rgba = np.asarray(canvas.buffer_rgba(), dtype=float)
        _GLYPH_CACHE[key] = 1.0 - rgba[:, :, 0] / 255.0
    return _GLYPH_CACHE[key]


def _check_chars(chars):
    """The classes of :func:`rendered_characters`: strings of one character each that the
    font draws with some ink (a blank glyph has no unit-length pixel vector)."""
    chars = list(chars)
    if not chars:
        raise ValueError("chars is empty")
    for ch in chars:
        if not isinstance(ch, str) or len(ch) != 1:
            shown = ascii(ch) if isinstance(ch, str) else type(ch).__name__
            raise ValueError(f"chars must hold strings of one character each, got {shown[:40]}")
        if not _glyph(ch).any():
            raise ValueError(f"chars holds {ascii(ch)}, which renders blank in DejaVu Sans")
    return chars


@validate_params({
    "chars": [InstanceOf(str, "a string of characters", example="ab"), "array-like"],
    "n_per_class": [_COUNT],
    "rotate": ["boolean"],
    "scale": ["boolean"],
    "out_size": [Options(1, 2, 3, 4, 6, 8, 12, 16, 24, 48)],
    "random_state": ["seed"],
})
def rendered_characters(chars, n_per_class, *, rotate=True, scale=False, out_size=16,
                        random_state=0):
    """Printed characters with random rotations and/or scalings (Chapter 11).

    Offline stand-in for the rotated and scaled printed characters of Maurer's
    experiments: each character is rendered once in DejaVu Sans (bundled with
    matplotlib) on a 48 x 48 canvas, then every sample applies a random rotation
    (uniform in [0, 360) degrees) and/or a random scaling (uniform in [0.5, 1.5]) about
    the centre, is reduced to ``out_size x out_size`` by block averaging, and is
    normalised to unit Euclidean length.

    Parameters
    ----------
    chars : str or sequence of str
        The classes, one character each (a string of length one that DejaVu Sans draws
        with some ink: not a space).
    n_per_class : int
    rotate, scale : bool
    out_size : int, default=16
        Must divide 48.
    random_state : int

    Returns
    -------
    X : ndarray of shape (len(chars) * n_per_class, out_size**2)
        Unit-length pixel vectors.
    y : ndarray of str
        The character of each row.

    Examples
    --------
    >>> import numpy as np
    >>> from lecturelib.datasets import rendered_characters
    >>> X, y = rendered_characters("AB", 3)
    >>> print(X.shape, y.tolist())
    (6, 256) ['A', 'A', 'A', 'B', 'B', 'B']
    >>> print(np.linalg.norm(X, axis=1).round(6))
    [1. 1. 1. 1. 1. 1.]
    """
    from scipy.ndimage import affine_transform

    size = 48
    rng = np.random.default_rng(random_state)
    block = size // out_size
    centre = np.array([(size - 1) / 2, (size - 1) / 2])
    X, y = [], []
    for ch in _check_chars(chars):
        img = _glyph(ch, size)
        for _ in range(int(n_per_class)):
            theta = rng.uniform(0, 2 * np.pi) if rotate else 0.0
            s = rng.uniform(0.5, 1.5) if scale else 1.0
            rot = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
            M = rot / s  # output -> input coordinates
            out = affine_transform(img, M, offset=centre - M @ centre, order=1, cval=0.0)
            small = out.reshape(out_size, block, out_size, block).mean(axis=(1, 3)).ravel()
            X.append(small / np.linalg.norm(small))
            y.append(ch)
    return np.array(X), np.array(y)


# --- end Chapters 10 and 11 ---

# --- Chapter 12: metric learning ---------------------------------------------------------


def balance_scale():
    """The UCI Balance Scale data, rebuilt exactly from its defining rule.

    Every one of the 5^4 = 625 combinations of left weight, left distance, right weight
    and right distance in {1, ..., 5} appears once (columns in that order, as in the UCI
    file).  The class is ``"L"`` if the scale tips left (left weight x left distance is
    larger), ``"R"`` if it tips right and ``"B"`` if it balances: 288, 288 and 49 rows.

    Returns ``(X, y)``: an int array of shape (625, 4) and a string array of shape (625,).

    Examples
    --------
    >>> from lecturelib.datasets import balance_scale
    >>> X, y = balance_scale()
    >>> print(X.shape, sorted(set(y.tolist())))
    (625, 4) ['B', 'L', 'R']
    """
    grid = np.arange(1, 6)
    X = np.array(np.meshgrid(grid, grid, grid, grid, indexing="ij")).reshape(4, -1).T
    torque = X[:, 0] * X[:, 1] - X[:, 2] * X[:, 3]
    y = np.where(torque > 0, "L", np.where(torque < 0, "R", "B"))
    return X, y


@validate_params({"n_samples": [Interval(Integral, 2, 569)], "random_state": ["seed"]})
def ionosphere_stand_in(n_samples=351, random_state=0):
    """Offline stand-in for the UCI Ionosphere data of the MENN paper's Table 1.

    Ionosphere (351 radar returns, 34 features, 2 classes) does not ship with
    scikit-learn.  This draws ``n_samples`` rows, without replacement, from scikit-learn's
    breast-cancer data (569 rows, 30 features, 2 classes), so that a learner sees as many
    points as it would on Ionosphere.  It stands in for the size, not the difficulty:
    chapter 12 ("The paper's comparison, offline") compares the two.

    Returns ``(X, y)``: a float array of shape (n_samples, 30) and the 0/1 labels.

    Examples
    --------
    >>> from lecturelib.datasets import ionosphere_stand_in
    >>> X, y = ionosphere_stand_in()
    >>> print(X.shape, sorted(set(y.tolist())))
    (351, 30) [0, 1]
    """
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    rows = np.random.default_rng(random_state).choice(len(y), n_samples, replace=False)
    return X[rows], y[rows]


@validate_params({"X": ["array-like"], "y": ["array-like"],
                  "random_state": [Interval(Integral, 0, None)]})
def menn_protocol_split(X, y, random_state=0):
    """One random split of the MENN paper's protocol (chapter 12, Table 1).

    A stratified 70/30 train/test split, then a stratified 15% of the training part held
    out for model selection; the metric is learned on the remaining 85%.  Features are
    returned unscaled.

    Parameters
    ----------
    X : array_like of shape (n_samples, n_features)
        Finite features.
    y : array_like of shape (n_samples,)
        Class labels, at least two points of each class.
    random_state : int, default=0

    Returns
    -------
    tuple
        ``(X_fit, y_fit, X_val, y_val, X_test, y_test)``.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from lecturelib.datasets import menn_protocol_split
    >>> X, y = load_iris(return_X_y=True)
    >>> parts = menn_protocol_split(X, y, random_state=0)
    >>> print([len(part) for part in parts[1::2]])
    [89, 16, 45]
    """
    from sklearn.model_selection import train_test_split
    from sklearn.utils.validation import check_X_y

    if np.ndim(y) != 1:
        # check_X_y only warns on a column and returns a flat copy, but the split returns
        # the y it was given: an (n, 1) y_test compared with (n,) predictions broadcasts
        raise ValueError(f"y must be a 1-D array of class labels, got shape {np.shape(y)}")
    check_X_y(X, y)  # finite 2-D X and one label per row; the split keeps the input types
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, stratify=y, random_state=random_state)
    X_fit, X_val, y_fit, y_val = train_test_split(
        X_train, y_train, test_size=0.15, stratify=y_train, random_state=random_state)
    return X_fit, y_fit, X_val, y_val, X_test, y_test


# --- end Chapter 12 ---
