"""mlkube: read and transform a namespace's data through the node-local mlkube agent.

    import mlkube
    c = mlkube.Client()                   # in a pod: agent, token and namespace found
    c.put("train/0001.bin", b"...")
    c.transform("decode", "train/0001.bin")

See docs/python.md in the mlkube repository.
"""

from .client import Client, ObjectInfo, ObjectPage
from ._config import ConfigError
from .errors import (BadRequest, ConnectionFailed, Forbidden, InsufficientStorage, MlkubeError,
                     NotFound, PreconditionFailed, TooLarge, TooManyRequests, TransformFailed,
                     Unauthorized, Unavailable)
from .template import Template

__version__ = "0.1.0"

__all__ = ["Client", "ObjectInfo", "ObjectPage", "ConfigError", "MlkubeError", "BadRequest",
           "ConnectionFailed", "Forbidden", "InsufficientStorage", "NotFound", "PreconditionFailed",
           "TooLarge", "TooManyRequests", "TransformFailed", "Unauthorized", "Unavailable",
           "Template"]
