"""Tables, figures and the HTML report made from tidy results: ``summaries``
(mean ± std tables), ``figures`` (matplotlib) and ``html`` (report.html)."""
