"""``python -m knnx.cli``: the knnx command line."""

from knnx.cli import app

if __name__ == "__main__":
    app()
