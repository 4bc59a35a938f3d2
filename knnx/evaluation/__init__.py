"""How a cell is evaluated: splits of a dataset (``protocols``), preprocessing fitted
on the training part (``preprocess``) and the metrics (``metrics``)."""
