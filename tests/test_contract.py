"""The public contract of lecturelib (DESIGN.md): every module and name exists and is documented."""

from __future__ import annotations

import importlib
import inspect

import pytest

CONTRACT = {
    "bayes": ["JointTable", "posterior", "map_decision", "ml_decision", "bayes_risk_decision",
              "incremental_posterior", "gaussian_mle", "GaussianBayesClassifier"],
    "maxent": ["entropy", "relative_entropy", "maxent_distribution", "GibbsModel"],
    "em": ["BernoulliMixture", "GaussianMixture", "MultinomialMixture"],
    "kernels": ["linear_kernel", "polynomial_kernel", "rbf_kernel", "gram_matrix",
                "polynomial_feature_map", "is_psd"],
    "svm": ["SVC"],
    "spectral": ["PCA", "KernelPCA", "LDA", "CCA", "KernelCCA"],
    "clustering": ["KMeans", "KernelKMeans", "SpectralClustering", "doubly_stochastic",
                   "ratio_cut_matrix", "normalized_cut_matrix"],
    "pac": ["RectangleLearner", "rectangle_sample_size", "finite_class_sample_size",
            "hoeffding_bound"],
    "vc": ["dichotomies", "is_shattered", "growth_function", "sauer_bound", "vc_sample_size",
           "double_sampling_bound"],
    "subspace": ["kernel_pca_residual_bound", "eigenvalue_bounds", "IncompleteCholesky", "SVM2K"],
    "hpca": ["HyperbolicPCA", "hpca_bound"],
    "metric": ["mahalanobis", "MMC", "LMNN", "ITML", "MetricEmbeddingNN", "knn_loo_error"],
    "datasets": [],
    "grading": ["assign", "grade", "main"],
}

PUBLIC = [(module, name) for module, names in CONTRACT.items() for name in names]


@pytest.mark.parametrize("module, name", PUBLIC, ids=[f"{m}.{n}" for m, n in PUBLIC])
def test_public_name_exists_with_a_docstring(module, name):
    mod = importlib.import_module(f"lecturelib.{module}")
    assert hasattr(mod, name), f"lecturelib.{module} has no public name {name!r}"
    obj = getattr(mod, name)
    doc = inspect.getdoc(obj) or ""
    assert len(doc) > 40, f"lecturelib.{module}.{name} needs a numpydoc docstring"


@pytest.mark.parametrize("module", sorted(CONTRACT))
def test_module_docstring_points_to_a_chapter(module):
    mod = importlib.import_module(f"lecturelib.{module}")
    doc = inspect.getdoc(mod) or ""
    assert doc, f"lecturelib.{module} has no module docstring"
    if module not in ("datasets", "grading"):
        assert "chapter" in doc.lower(), f"lecturelib.{module}'s docstring should name its chapter"
