# The two commands: `make run` serves the site with demo data, `make test` runs every check.
# `make test-fast` is the quick loop: ruff and the tests with no browser and no program of their own.
# `make run`'s server (core/management/commands/serve.py) also runs the periodic tasks.
# `make stack` runs it production-like: PostgreSQL, Redis, gunicorn, a Celery worker and beat.
# `make test-pgbouncer` runs the tests of the hand-written statements through PgBouncer in transaction mode.
# `make screenshots` runs the browser tests and keeps their screenshots in test-artifacts/ (phone, desktop, light, dark).
# `make test-image` builds the container image and runs it (web, worker, beat), then checks compose.yaml.
# `make mutate` (not in CI) mutates ratings/engines and runs its tests, no database needed.
.PHONY: run stack test test-fast test-pgbouncer test-image screenshots lint format migrate shell clean mutate

HOST ?= 127.0.0.1
PORT ?= 8000

run:
	@bash scripts/ensure-venv.sh requirements.txt
	@.venv/bin/python manage.py migrate --noinput
	@.venv/bin/python manage.py seed_demo
	@.venv/bin/python manage.py seed_demo_fields
	@.venv/bin/python manage.py seed_demo_seasons
	@.venv/bin/python manage.py seed_demo_tournaments
	@.venv/bin/python manage.py rebuild_stats
	@.venv/bin/python manage.py seed_demo_queue
	@echo ""
	@echo "  Ladder is running at http://$(HOST):$(PORT)/   (moderation: http://$(HOST):$(PORT)/admin/)"
	@echo "  admin and moderator also ask for a code: .venv/bin/python manage.py demo_code prints it"
	@echo ""
	@.venv/bin/python manage.py serve $(HOST):$(PORT) --demo-searchers

stack:
	@HOST=$(HOST) PORT=$(PORT) SITE_URL="$${SITE_URL:-http://$(HOST):$(PORT)}" bash scripts/stack.sh

test:
	@bash scripts/ensure-venv.sh requirements-dev.txt
	@bash scripts/test.sh $(PYTEST_ARGS)

test-fast:
	@bash scripts/ensure-venv.sh requirements-dev.txt
	@bash scripts/test.sh --fast $(PYTEST_ARGS)

test-pgbouncer:
	@bash scripts/ensure-venv.sh requirements-dev.txt
	@bash scripts/test.sh --pgbouncer $(PYTEST_ARGS)

screenshots:
	@bash scripts/ensure-venv.sh requirements-dev.txt
	@SCREENSHOTS=1 bash scripts/test.sh -m browser $(PYTEST_ARGS)

test-image:
	@bash scripts/test-image.sh $(PYTEST_ARGS)

lint:
	@bash scripts/ensure-venv.sh requirements-dev.txt
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	.venv/bin/lint-imports --no-cache
	.venv/bin/mypy

format:
	@bash scripts/ensure-venv.sh requirements-dev.txt
	.venv/bin/ruff check --fix .
	.venv/bin/ruff format .

# mutmut's settings: setup.cfg [mutmut]; what the figures mean: docs/architecture.md, "Mutation testing".
mutate:
	@bash scripts/ensure-venv.sh requirements-dev.txt
	nice -n 10 .venv/bin/mutmut run --max-children 2
	@.venv/bin/mutmut results

migrate:
	@bash scripts/ensure-venv.sh requirements.txt
	.venv/bin/python manage.py migrate

clean:
	rm -rf .venv var staticfiles .pytest_cache .ruff_cache .mypy_cache
