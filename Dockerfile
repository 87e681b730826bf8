# The race server. docker-compose.yml runs it with PostgreSQL.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md alembic.ini ./
COPY engine engine
COPY wire wire
COPY server server
COPY clients clients
COPY migrations migrations
COPY docs docs
# Editable, so the server finds alembic.ini and migrations/ beside its source.
RUN pip install --no-cache-dir -e .
ENV PATIENCE_RACE_HOST=0.0.0.0
EXPOSE 8765
CMD ["patience-race", "serve"]
