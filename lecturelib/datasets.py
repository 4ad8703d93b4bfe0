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
