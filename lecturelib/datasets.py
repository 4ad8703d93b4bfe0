"""Every small data set the course uses, shipped as literals or generated offline.

Nothing here touches the network.  Tables printed in the lecture notes are typed in
as they appear there (with the source noted in each docstring); larger data sets are
the ones that ship with scikit-learn, or synthetic stand-ins generated from a fixed
seed.  Each loader returns plain numpy arrays (or a small dataclass of them).
"""

from __future__ import annotations

import numpy as np

# Each chapter keeps its loaders in its own section below; add new loaders inside
# your chapter's section only, so that parallel work on chapters never collides.

# --- Chapter 1: Bayes ---------------------------------------------------------------


def bmi_counts():
    """Hit counts of the BMI example (Shashua's notes, Fig. 1.1).

    Rows are the classes h1 = over-weight and h2 = normal weight; columns are five
    ordered BMI values x1..x5.  22 hits in total.
    """
    return np.array([[2, 5, 4, 2, 1], [0, 0, 3, 3, 2]])


def cancer_test_kit():
    """The cancer test kit of the notes (credited there to Y. Mansour).

    Returns a dict with ``p_pos_given_cancer`` = 0.98, ``p_pos_given_healthy`` = 0.03
    and the prior ``p_cancer`` = 0.01.
    """
    return {"p_pos_given_cancer": 0.98, "p_pos_given_healthy": 0.03, "p_cancer": 0.01}


def fair_or_biased_coin():
    """The incremental-Bayes coin of the notes (credited there to R. Rivest).

    Returns a dict: ``p_head`` = (0.5, 0.6) for (fair, biased) and ``prior`` = (0.75, 0.25).
    """
    return {"p_head": (0.5, 0.6), "prior": (0.75, 0.25)}


# --- end Chapter 1 ---

# --- Chapters 2 and 3: MaxEnt and EM ---------------------------------------------------

# --- end Chapters 2 and 3 ---

# --- Chapter 4: SVM and kernels ---------------------------------------------------------

# --- end Chapter 4 ---

# --- Chapter 5: PCA, LDA, CCA -----------------------------------------------------------

# --- end Chapter 5 ---

# --- Chapter 6: clustering --------------------------------------------------------------

# --- end Chapter 6 ---

# --- Chapters 7-9: PAC, VC, double sampling ------------------------------------------------

# --- end Chapters 7-9 ---

# --- Chapters 10 and 11: subspace bounds, hyperbolic PCA ---------------------------------

# --- end Chapters 10 and 11 ---

# --- Chapter 12: metric learning ---------------------------------------------------------

# --- end Chapter 12 ---
