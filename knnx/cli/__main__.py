"""``python -m knnx.cli``: the knnx command line."""

from knnx.cli import main

if __name__ == "__main__":
    main()
