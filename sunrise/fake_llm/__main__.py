"""`python -m sunrise.fake_llm --port 8765 --latency-ms 300`."""

import sys

from sunrise.fake_llm.server import main

sys.exit(main())
