"""One exception family for every domain error; the CLI turns them into one line and exit 2."""


class KnnxError(Exception):
    """Base class of knnx's domain errors. ``str(err)`` is a complete message: one line,
    or, for an error made with :meth:`from_lines` (a spec with several problems), one
    line per problem; :meth:`lines` gives them (a line may quote a user's text holding a
    line break: the CLI escapes it, so each problem prints as one line)."""

    @classmethod
    def from_lines(cls, lines):
        err = cls("\n".join(lines))
        err._lines = list(lines)
        return err

    def lines(self):
        return list(getattr(self, "_lines", None) or [str(self)])


class SpecError(KnnxError, ValueError):
    """An experiment spec is malformed or asks for something impossible."""


class DataError(KnnxError, ValueError):
    """A dataset, CSV file or array is malformed (names the file, column and row)."""


class ResultsError(KnnxError):
    """A results file or output folder cannot be used as asked."""


class CellError(KnnxError):
    """A cell failed while running (names the cell and the underlying error)."""


class WriteError(ResultsError):
    """The operating system refused to write an output file (a full disk, a file-size
    limit, a permission changed while running): names the path and the OS reason. What
    was written before is intact and a rerun resumes; the CLI exits with code 3."""
