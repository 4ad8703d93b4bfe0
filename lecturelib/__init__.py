"""lecturelib: the algorithms of the course book, one module per lecture topic.

Every chapter notebook imports what it needs from here, so a chapter shows the idea
and the numbers rather than the plumbing.  The modules (see the book's chapters):

``bayes``       Bayesian decision theory (chapter 1)
``maxent``      maximum likelihood and maximum entropy (chapter 2)
``em``          the EM algorithm and mixtures (chapter 3)
``kernels``     kernel functions and feature maps (chapter 4)
``svm``         the soft-margin support vector machine solved by SMO (chapter 4)
``spectral``    PCA, kernel PCA, LDA, CCA, kernel CCA (chapter 5)
``clustering``  k-means, cuts and spectral clustering (chapter 6)
``pac``         the PAC model (chapter 7)
``vc``          the VC dimension and double sampling (chapters 8 and 9)
``subspace``    subspace methods and their bounds (chapter 10)
``hpca``        hyperbolic PCA (chapter 11)
``metric``      metric learning and metric embedding for nearest neighbours (chapter 12)
``plotting``    the book's figure style and the figures several chapters share
``datasets``    every small data set the course uses, shipped or generated offline
``grading``     the exercise generator and the grader behind the ``lecturelib`` command
"""

__version__ = "0.1.0"
