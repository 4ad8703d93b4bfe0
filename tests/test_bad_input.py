"""Bad input, everywhere: every public function and estimator refuses it with a clear error.

Each row feeds one kind of bad input to one entry point and states the exception type and a
pattern the message must contain (so the message names the problem).  Nothing may be
clipped, renormalised or dropped silently: a call that returns instead of raising fails.
"""

from __future__ import annotations

import numpy as np
import pytest

from lecturelib import bayes, checks, clustering, em, hpca, kernels, maxent, metric, pac, spectral, subspace, svm, vc

NAN = np.nan
INF = np.inf
X_OK = np.random.default_rng(0).normal(size=(20, 3))
Y_OK = np.repeat([0, 1], 10)


def fit(estimator, *args):
    return lambda: estimator.fit(*args)


# (id, thunk, exception, message pattern)
CASES = [
    # ---------------------------------------------------------------- bayes
    ("bayes.JointTable nan", lambda: bayes.JointTable([[1, NAN], [2, 3]]), ValueError, "NaN"),
    ("bayes.JointTable inf", lambda: bayes.JointTable([[1, INF], [2, 3]]), ValueError, "infinity"),
    ("bayes.JointTable negative", lambda: bayes.JointTable([[1, -2], [2, 3]]), ValueError, "negative"),
    ("bayes.JointTable 1-D", lambda: bayes.JointTable([1, 2]), ValueError, "dimension"),
    ("bayes.JointTable empty", lambda: bayes.JointTable(np.zeros((0, 3))), ValueError, "empty"),
    ("bayes.posterior prior not summing to 1", lambda: bayes.posterior([0.2, 0.3], [0.6, 0.6]),
     ValueError, "sum to 1"),
    ("bayes.posterior negative likelihood", lambda: bayes.posterior([-0.2, 0.3], [0.5, 0.5]),
     ValueError, "negative"),
    ("bayes.posterior mismatched lengths", lambda: bayes.posterior([0.2, 0.3, 0.1], [0.5, 0.5]),
     ValueError, "classes but prior"),
    ("bayes.posterior nan", lambda: bayes.posterior([NAN, 0.3], [0.5, 0.5]), ValueError, "NaN"),
    ("bayes.map_decision impossible x", lambda: bayes.map_decision([0.0, 0.0], [0.5, 0.5]),
     ValueError, "evidence"),
    ("bayes.ml_decision 3-D", lambda: bayes.ml_decision(np.ones((2, 2, 2))), ValueError, "dimension"),
    ("bayes.bayes_risk_decision loss shape", lambda: bayes.bayes_risk_decision([0.5, 0.5], np.ones((2, 3))),
     ValueError, "loss must have shape"),
    ("bayes.expected_risk posterior not summing to 1",
     lambda: bayes.expected_risk([0.5, 0.6], 1 - np.eye(2)), ValueError, "sum to 1"),
    ("bayes.incremental_posterior 1-D", lambda: bayes.incremental_posterior([0.5, 0.5], [0.1, 0.2]),
     ValueError, "one row per observation"),
    ("bayes.incremental_posterior mismatched", lambda: bayes.incremental_posterior([0.5, 0.5], np.ones((3, 4))),
     ValueError, "classes but prior"),
    ("bayes.bernoulli_mle not 0/1", lambda: bayes.bernoulli_mle([0, 1, 3]), ValueError, "only 0 and 1"),
    ("bayes.bernoulli_mle empty", lambda: bayes.bernoulli_mle([]), ValueError, "empty"),
    ("bayes.gaussian_mle nan", lambda: bayes.gaussian_mle([[0, NAN], [1, 1]]), ValueError, "NaN"),
    ("bayes.gaussian_mle 1-D", lambda: bayes.gaussian_mle([0, 1, 2]), ValueError, "dimension"),
    ("bayes.gaussian_log_likelihood non-PD", lambda: bayes.gaussian_log_likelihood(X_OK[:, :2], [0, 0], [[1, 2], [2, 1]]),
     ValueError, "not positive definite"),
    ("bayes.free_parameters zero size", lambda: bayes.free_parameters((3, 0)), ValueError, "positive integers"),
    ("bayes.GaussianBayesClassifier one class", fit(bayes.GaussianBayesClassifier(), X_OK, np.zeros(20)),
     ValueError, "two classes"),
    ("bayes.GaussianBayesClassifier nan", fit(bayes.GaussianBayesClassifier(), np.where(X_OK > 1, NAN, X_OK), Y_OK),
     ValueError, "NaN"),
    ("bayes.GaussianBayesClassifier inf", fit(bayes.GaussianBayesClassifier(), np.where(X_OK > 1, INF, X_OK), Y_OK),
     ValueError, "infinity"),
    ("bayes.GaussianBayesClassifier mismatched lengths", fit(bayes.GaussianBayesClassifier(), X_OK, Y_OK[:-1]),
     ValueError, "inconsistent numbers of samples"),
    ("bayes.GaussianBayesClassifier empty", fit(bayes.GaussianBayesClassifier(), X_OK[:0], Y_OK[:0]),
     ValueError, "0 sample"),
    ("bayes.GaussianBayesClassifier singular covariance",
     fit(bayes.GaussianBayesClassifier(), np.c_[X_OK, X_OK[:, 0]], Y_OK), ValueError, "not positive definite"),
    ("bayes.GaussianBayesClassifier bad priors", fit(bayes.GaussianBayesClassifier(priors=[0.5, 0.6]), X_OK, Y_OK),
     ValueError, "sum to 1"),
    ("bayes.GaussianBayesClassifier negative reg", fit(bayes.GaussianBayesClassifier(reg=-1.0), X_OK, Y_OK),
     ValueError, "reg"),
    ("bayes.GaussianBayesClassifier predict wrong width",
     lambda: bayes.GaussianBayesClassifier().fit(X_OK, Y_OK).predict(X_OK[:, :2]), ValueError, "features"),
    # ---------------------------------------------------------------- kernels
    ("kernels.rbf_kernel nan", lambda: kernels.rbf_kernel(np.where(X_OK > 1, NAN, X_OK)), ValueError, "NaN"),
    ("kernels.rbf_kernel feature mismatch", lambda: kernels.rbf_kernel(X_OK, X_OK[:, :2]), ValueError, "same number of features"),
    ("kernels.polynomial_kernel degree 0", lambda: kernels.polynomial_kernel(X_OK, degree=0), ValueError, "degree"),
    ("kernels.polynomial_feature_map negative theta", lambda: kernels.polynomial_feature_map(X_OK, 2, theta=-1.0), ValueError, "theta"),
    ("kernels.is_psd not square", lambda: kernels.is_psd(np.ones((2, 3))), ValueError, "square"),
    ("kernels.gram_matrix unknown kernel", lambda: kernels.gram_matrix(X_OK, kernel="cosine"), ValueError, "kernel must be one of"),
    # ---------------------------------------------------------------- svm
    ("svm.SVC one class", fit(svm.SVC(), X_OK, np.zeros(20)), ValueError, "two classes"),
    ("svm.SVC three classes", fit(svm.SVC(), X_OK, np.arange(20) % 3), ValueError, "Only binary classification"),
    ("svm.SVC nan", fit(svm.SVC(), np.where(X_OK > 1, NAN, X_OK), Y_OK), ValueError, "NaN"),
    ("svm.SVC non-PSD precomputed", fit(svm.SVC(kernel="precomputed"), kernels.sigmoid_kernel(X_OK), Y_OK), ValueError, "not positive semi-definite"),
    ("svm.SVC negative C", fit(svm.SVC(C=-1.0), X_OK, Y_OK), ValueError, "C must be"),
    ("svm.SVC predict wrong width", lambda: svm.SVC().fit(X_OK, Y_OK).predict(X_OK[:, :2]), ValueError, "features"),
    # ---------------------------------------------------------------- clustering
    ("clustering.KMeans k larger than n", fit(clustering.KMeans(n_clusters=30), X_OK), ValueError,
     "should be >= n_clusters"),
    ("clustering.KMeans nan", fit(clustering.KMeans(n_clusters=2), np.where(X_OK > 1, NAN, X_OK)),
     ValueError, "NaN"),
    ("clustering.KMeans empty", fit(clustering.KMeans(n_clusters=2), X_OK[:0]), ValueError, "0 sample"),
    ("clustering.SpectralClustering k larger than n", fit(clustering.SpectralClustering(n_clusters=30), X_OK),
     ValueError, "should be >= n_clusters"),
    ("clustering.KernelKMeans non-PSD kernel",
     fit(clustering.KernelKMeans(n_clusters=2, kernel="precomputed"), -np.eye(20)), ValueError,
     "not positive semi-definite"),
    ("clustering.doubly_stochastic negative", lambda: clustering.doubly_stochastic([[1.0, -1.0], [-1.0, 1.0]]),
     ValueError, "negative"),
    ("clustering.doubly_stochastic isolated point", lambda: clustering.doubly_stochastic([[0.0, 0.0], [0.0, 1.0]]),
     ValueError, "isolated"),
    ("clustering.ratio_cut_matrix not square", lambda: clustering.ratio_cut_matrix(np.ones((2, 3))),
     ValueError, "square"),
    ("clustering.normalized_cut_matrix not symmetric",
     lambda: clustering.normalized_cut_matrix([[1.0, 2.0], [0.0, 1.0]]), ValueError, "symmetric"),
    # ---------------------------------------------------------------- maxent
    ("maxent.entropy not summing to 1", lambda: maxent.entropy([0.5, 0.6]), ValueError, "sum to 1"),
    ("maxent.relative_entropy negative", lambda: maxent.relative_entropy([1, -2], [1, 2]), ValueError, "negative"),
    ("maxent.relative_entropy lengths", lambda: maxent.relative_entropy([1, 2], [1, 2, 3]), ValueError, "same length"),
    ("maxent.relative_entropy nan", lambda: maxent.relative_entropy([1, NAN], [1, 2]), ValueError, "NaN"),
    ("maxent.maxent_distribution unattainable", lambda: maxent.maxent_distribution(np.arange(1, 7), [7.0]),
     ValueError, "not attainable"),
    ("maxent.maxent_distribution prior length", lambda: maxent.maxent_distribution(np.arange(1, 7), [4.2], prior=[0.5, 0.5]),
     ValueError, "one entry per outcome"),
    ("maxent.GibbsModel one sample", fit(maxent.GibbsModel(), [[1.0]]), ValueError, "at least 2 samples"),
    ("maxent.GibbsModel inf", fit(maxent.GibbsModel(), np.where(X_OK > 1, INF, X_OK)), ValueError, "infinity"),
    # ---------------------------------------------------------------- em
    ("em.GaussianMixture nan", fit(em.GaussianMixture(), np.where(X_OK > 1, NAN, X_OK)), ValueError, "NaN"),
    ("em.GaussianMixture k > n", fit(em.GaussianMixture(30), X_OK), ValueError, "larger than the number of samples"),
    ("em.GaussianMixture covariance_type", fit(em.GaussianMixture(covariance_type="tied"), X_OK), ValueError, "covariance_type"),
    ("em.GaussianMixture non-PD covariances_init",
     fit(em.GaussianMixture(covariances_init=np.stack([-np.eye(3)] * 2)), X_OK), ValueError, "not positive definite"),
    ("em.BernoulliMixture not 0/1", fit(em.BernoulliMixture(), X_OK), ValueError, "only 0 and 1"),
    ("em.MultinomialMixture negative", fit(em.MultinomialMixture(), X_OK), ValueError, "Negative values"),
    ("em.MultinomialMixture empty", fit(em.MultinomialMixture(), X_OK[:0]), ValueError, "0 sample"),
    # ---------------------------------------------------------------- subspace
    ("subspace.IncompleteCholesky negative diagonal", fit(subspace.IncompleteCholesky(), -np.eye(5)),
     ValueError, "not positive semi-definite"),
    ("subspace.IncompleteCholesky non-PSD", fit(subspace.IncompleteCholesky(), [[1.0, 2.0], [2.0, 1.0]]),
     ValueError, "not positive semi-definite"),
    ("subspace.IncompleteCholesky not square", fit(subspace.IncompleteCholesky(), np.ones((3, 4))),
     ValueError, "square"),
    ("subspace.IncompleteCholesky nan", fit(subspace.IncompleteCholesky(), np.full((3, 3), NAN)),
     ValueError, "NaN"),
    ("subspace.IncompleteCholesky max_rank 0", fit(subspace.IncompleteCholesky(max_rank=0), X_OK @ X_OK.T),
     ValueError, "max_rank"),
    ("subspace.kernel_pca_residual_bound k larger than n",
     lambda: subspace.kernel_pca_residual_bound(X_OK @ X_OK.T, 30), ValueError, "larger than the sample size"),
    ("subspace.kernel_pca_residual_bound delta", lambda: subspace.kernel_pca_residual_bound(X_OK @ X_OK.T, 2, delta=1.5),
     ValueError, "delta"),
    ("subspace.kernel_pca_residual_bound non-PSD", lambda: subspace.kernel_pca_residual_bound(-np.eye(4), 1),
     ValueError, "not positive semi-definite"),
    ("subspace.eigenvalue_bounds not square", lambda: subspace.eigenvalue_bounds(np.ones((3, 4)), [1]),
     ValueError, "square"),
    ("subspace.SVM2K one class", fit(subspace.SVM2K(views=[[0], [1, 2]]), X_OK, np.zeros(20)), ValueError, "1 class"),
    ("subspace.SVM2K nan", fit(subspace.SVM2K(views=[[0], [1, 2]]), np.where(X_OK > 1, NAN, X_OK), Y_OK),
     ValueError, "NaN"),
    ("subspace.SVM2K bad view", fit(subspace.SVM2K(views=[[0], [5]]), X_OK, Y_OK), ValueError, "view"),
    # ---------------------------------------------------------------- hpca
    ("hpca.HyperbolicPCA one class", fit(hpca.HyperbolicPCA(), X_OK, np.zeros(20)), ValueError, "two classes"),
    ("hpca.HyperbolicPCA k larger than rank", fit(hpca.HyperbolicPCA(n_components=10), X_OK, Y_OK),
     ValueError, "larger than the rank"),
    ("hpca.HyperbolicPCA nan", fit(hpca.HyperbolicPCA(), np.where(X_OK > 1, NAN, X_OK), Y_OK), ValueError, "NaN"),
    ("hpca.hpca_bound delta", lambda: hpca.hpca_bound(100, 2, 0.5, delta=0), ValueError, "delta"),
    ("hpca.hpca_bound no samples", lambda: hpca.hpca_bound(0, 2, 0.5), ValueError, "m must be"),
    ("hpca.empirical_margin_risk mismatched",
     lambda: hpca.empirical_margin_risk(np.ones(3), np.ones(4, bool), 0.5, 0.5), ValueError, "shape"),
    ("hpca.one_shot_nn_error mismatched", lambda: hpca.one_shot_nn_error(X_OK, Y_OK[:5]), ValueError, "one label per row"),
    # ---------------------------------------------------------------- pac
    ("pac.RectangleLearner nan", fit(pac.RectangleLearner(), np.where(X_OK > 1, NAN, X_OK), Y_OK), ValueError, "NaN"),
    ("pac.RectangleLearner mismatched lengths", fit(pac.RectangleLearner(), X_OK, Y_OK[:5]), ValueError,
     "inconsistent numbers of samples"),
    ("pac.rectangle_sample_size eps", lambda: pac.rectangle_sample_size(0, 0.1), ValueError, "eps"),
    ("pac.rectangle_sample_size delta", lambda: pac.rectangle_sample_size(0.1, 1.5), ValueError, "delta"),
    ("pac.finite_class_sample_size empty class", lambda: pac.finite_class_sample_size(0.1, 0.1, 0), ValueError, "size"),
    ("pac.hoeffding_bound negative eps", lambda: pac.hoeffding_bound(10, -0.1), ValueError, "eps must be positive"),
    ("pac.hoeffding_bound nan eps", lambda: pac.hoeffding_bound(10, NAN), ValueError, "eps must be positive"),
    ("pac.hoeffding_bound negative m", lambda: pac.hoeffding_bound(-3, 0.1), ValueError, "m must be non-negative"),
    # ---------------------------------------------------------------- vc
    ("vc.dichotomies unknown class", lambda: vc.dichotomies(X_OK[:, :2], "circles"), ValueError, "concept_class"),
    ("vc.dichotomies nan", lambda: vc.dichotomies(np.array([NAN, 1.0]), "thresholds"), ValueError, "NaN"),
    ("vc.is_shattered empty", lambda: vc.is_shattered(np.zeros((0, 2)), "halfplanes"), ValueError, "empty"),
    ("vc.growth_function negative m", lambda: vc.growth_function("intervals", -1), ValueError, "m must be"),
    ("vc.sauer_bound negative d", lambda: vc.sauer_bound(10, -1), ValueError, "d must be non-negative"),
    ("vc.vc_sample_size eps", lambda: vc.vc_sample_size(3, 0, 0.1), ValueError, "eps"),
    ("vc.double_sampling_bound eps", lambda: vc.double_sampling_bound(10, 3, 2.0), ValueError, "eps"),
    # ---------------------------------------------------------------- spectral
    ("spectral.PCA k larger than n", lambda: spectral.PCA(10).fit(np.ones((5, 3))), ValueError, "larger than"),
    ("spectral.PCA nan", lambda: spectral.PCA().fit([[1.0, NAN], [2.0, 3.0]]), ValueError, "NaN"),
    ("spectral.PCA one sample", lambda: spectral.PCA().fit(np.ones((1, 3))), ValueError, "1 sample"),
    ("spectral.KernelPCA non-PSD", lambda: spectral.KernelPCA(kernel="precomputed").fit([[1.0, 2.0], [2.0, 1.0]]),
     ValueError, "positive semi-definite"),
    ("spectral.KernelPCA k larger than n", lambda: spectral.KernelPCA(50).fit(np.eye(5)), ValueError, "larger than"),
    ("spectral.LDA one class", fit(spectral.LDA(), X_OK, np.zeros(20)), ValueError, "two classes"),
    ("spectral.LDA singular within-class scatter", fit(spectral.LDA(), np.c_[X_OK, X_OK[:, 0]], Y_OK),
     ValueError, "singular"),
    ("spectral.LDA inf", fit(spectral.LDA(), np.where(X_OK > 1, INF, X_OK), Y_OK), ValueError, "infinity"),
    ("spectral.CCA mismatched lengths", lambda: spectral.CCA().fit(np.ones((5, 2)), np.ones((6, 2))),
     ValueError, "inconsistent"),
    ("spectral.CCA k larger than rank", lambda: spectral.CCA(3).fit(np.eye(6)[:, :2], np.eye(6)[:, 2:5]),
     ValueError, "larger than"),
    ("spectral.KernelCCA reg outside [0, 1]", lambda: spectral.KernelCCA(reg=1.5).fit(np.eye(4), np.eye(4)),
     ValueError, "reg"),
    # ---------------------------------------------------------------- metric
    # ---------------------------------------------------------------- metric
    ("metric.mahalanobis nan", lambda: metric.mahalanobis([NAN, 0.0], [1.0, 0.0], np.eye(2)),
     ValueError, "NaN"),
    ("metric.mahalanobis feature mismatch", lambda: metric.mahalanobis([0.0, 0.0], [1.0, 0.0, 2.0], np.eye(2)),
     ValueError, "same number of features"),
    ("metric.mahalanobis M not PSD", lambda: metric.mahalanobis([0.0, 0.0], [1.0, 0.0], np.diag([1.0, -1.0])),
     ValueError, "positive semi-definite"),
    ("metric.mahalanobis M not symmetric", lambda: metric.mahalanobis([0.0, 0.0], [1.0, 0.0], [[1.0, 0.5], [0.0, 1.0]]),
     ValueError, "symmetric"),
    ("metric.mahalanobis M wrong shape", lambda: metric.mahalanobis([0.0, 0.0], [1.0, 0.0], np.eye(3)),
     ValueError, "shape"),
    ("metric.pairwise_mahalanobis inf", lambda: metric.pairwise_mahalanobis([[INF, 0.0], [1.0, 1.0]]),
     ValueError, "infinity"),
    ("metric.knn_loo_error k too large", lambda: metric.knn_loo_error(X_OK, Y_OK, n_neighbors=20),
     ValueError, "larger than"),
    ("metric.knn_loo_error k zero", lambda: metric.knn_loo_error(X_OK, Y_OK, n_neighbors=0),
     ValueError, "n_neighbors"),
    ("metric.knn_loo_error label count", lambda: metric.knn_loo_error(X_OK, Y_OK[:-1]),
     ValueError, "labels"),
    ("metric.knn_loo_error continuous labels", lambda: metric.knn_loo_error(X_OK, np.linspace(0, 1, 20)),
     ValueError, "continuous"),
    ("metric.knn_loo_error precomputed not square",
     lambda: metric.knn_loo_error(np.ones((20, 3)), Y_OK, precomputed=True), ValueError, "square"),
    ("metric.psd_projection not square", lambda: metric.psd_projection(np.ones((2, 3))),
     ValueError, "square"),
    ("metric.MMC single class", fit(metric.MMC(), X_OK, np.zeros(20)), ValueError, "two classes"),
    ("metric.MMC nan", fit(metric.MMC(), np.where(np.eye(20, 3) == 1, NAN, X_OK), Y_OK), ValueError, "NaN"),
    ("metric.LMNN push_weight out of range", fit(metric.LMNN(push_weight=1.5), X_OK, Y_OK),
     ValueError, "push_weight"),
    ("metric.LMNN single class", fit(metric.LMNN(), X_OK, np.zeros(20)), ValueError, "two classes"),
    ("metric.ITML bad bounds", fit(metric.ITML(bounds=(2.0, 1.0)), X_OK, Y_OK), ValueError, "bounds"),
    ("metric.ITML gamma zero", fit(metric.ITML(gamma=0.0), X_OK, Y_OK), ValueError, "gamma"),
    ("metric.MetricEmbeddingNN bad kernel", fit(metric.MetricEmbeddingNN(kernel="poly"), X_OK, Y_OK),
     ValueError, "kernel"),
    ("metric.MetricEmbeddingNN eta zero", fit(metric.MetricEmbeddingNN(eta=0.0), X_OK, Y_OK),
     ValueError, "eta"),
    ("metric.MetricEmbeddingNN bad solver", fit(metric.MetricEmbeddingNN(solver="newton"), X_OK, Y_OK),
     ValueError, "solver"),
    # ---------------------------------------------------------------- checks (public checks)
    ("checks.PublicChecks no assignment", lambda: checks.PublicChecks("", {}), ValueError, "assignment"),
    ("checks.PublicChecks checks not a dict", lambda: checks.PublicChecks("a", [("x", "y")]), TypeError, "dict"),
    ("checks.PublicChecks check without why", lambda: checks.PublicChecks("a", {"q1": [{"expr": "1"}]}),
     ValueError, "'expr', 'why'"),
    ("checks.PublicChecks unknown question", lambda: checks.PublicChecks("a", {"q1": []}).run("q2", {}),
     ValueError, "no question 'q2'"),
    ("metric.menn_objective C_bar shape",
     lambda: metric.menn_objective(np.eye(3), 1.0, np.eye(4), [0, 0, 1, 1]), ValueError, "shape"),
]


@pytest.mark.parametrize("thunk, exc, pattern", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_refused_with_a_clear_message(thunk, exc, pattern):
    with pytest.raises(exc, match=pattern):
        thunk()


def test_every_public_module_has_cases():
    covered = {c[0].split(".")[0] for c in CASES}
    import pkgutil

    import lecturelib

    modules = {m.name for m in pkgutil.iter_modules(lecturelib.__path__)
               if not m.name.startswith("_") and m.name not in ("grading", "datasets")}
    assert modules <= covered, f"modules without bad-input cases: {sorted(modules - covered)}"
