"""tf.keras.metrics: re-exports tapeflow.layers.metrics."""
from tapeflow.layers.metrics import (AUC, Accuracy, BinaryAccuracy, BinaryCrossentropy,  # noqa: F401
                                     CategoricalAccuracy, CategoricalCrossentropy, Mean, MeanAbsoluteError,
                                     MeanAbsolutePercentageError, MeanMetricWrapper, MeanSquaredError, Metric,
                                     Precision, Recall, RootMeanSquaredError, SparseCategoricalAccuracy,
                                     SparseCategoricalCrossentropy, SparseTopKCategoricalAccuracy, Sum,
                                     TopKCategoricalAccuracy, accuracy, binary_accuracy, categorical_accuracy,
                                     deserialize, get, mean_absolute_error, mean_absolute_percentage_error,
                                     mean_squared_error, serialize, sparse_categorical_accuracy,
                                     sparse_top_k_categorical_accuracy, top_k_categorical_accuracy)
from tapeflow.layers.metrics import (BinaryIoU, F1Score, FBetaScore, IoU, MeanIoU, OneHotIoU,  # noqa: F401
                                     OneHotMeanIoU, R2Score)
from tapeflow.layers.metrics import FalseNegatives, FalsePositives, TrueNegatives, TruePositives  # noqa: F401
from tapeflow.layers.metrics import (PrecisionAtRecall, RecallAtPrecision, SensitivityAtSpecificity,  # noqa: F401
                                     SpecificityAtSensitivity)
