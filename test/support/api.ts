// Drives the Worker through its own fetch handler in workerd, as a client would.
import { exports } from 'cloudflare:workers'
import type { ResourceConfig } from '../../worker/models/resources'
import type { Answer, AnswersByStatus, ResourceRecord } from './answers'
import { type CallOptions, type JsonAnswer, readJson, requestFor } from './request'

export type { Answer, ErrorAnswer, ResourceRecord } from './answers'
export { BASE, bodyAt, type CallOptions, type JsonAnswer, randomIp, requestFor } from './request'

export async function call(method: string, path: string, options: CallOptions = {}): Promise<Response> {
  return exports.default.fetch(requestFor(method, path, options))
}

/**
 * Calls and parses the JSON body. The body's type is the route's own (test/support/answers.ts) when the path is a
 * literal or a template; for any other path it is `unknown` unless the caller names it: `callJson<Job>(…)`.
 */
export async function callJson<Method extends string, Path extends string>(
  method: Method,
  path: Path,
  options?: CallOptions,
): Promise<JsonAnswer<Answer<Method, Path>, AnswersByStatus<Method, Path>>>
export async function callJson<Body>(method: string, path: string, options?: CallOptions): Promise<JsonAnswer<Body>>
export async function callJson(method: string, path: string, options: CallOptions = {}): Promise<JsonAnswer<unknown>> {
  return readJson(await call(method, path, options))
}

/**
 * Calls a Worker built with some settings changed (same real D1, R2, Queues and Durable Objects), for
 * behaviour that depends on configuration.
 */
export async function callWithSettings(
  settings: Partial<Record<keyof Env, string>>,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<Response> {
  return callBuiltApp({ settings }, method, path, options)
}

/** callWithSettings, and parses the JSON body as callJson does. */
export async function callJsonWithSettings<Method extends string, Path extends string>(
  settings: Partial<Record<keyof Env, string>>,
  method: Method,
  path: Path,
  options?: CallOptions,
): Promise<JsonAnswer<Answer<Method, Path>, AnswersByStatus<Method, Path>>>
export async function callJsonWithSettings<Body>(
  settings: Partial<Record<keyof Env, string>>,
  method: string,
  path: string,
  options?: CallOptions,
): Promise<JsonAnswer<Body>>
export async function callJsonWithSettings(
  settings: Partial<Record<keyof Env, string>>,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<JsonAnswer<unknown>> {
  return readJson(await callBuiltApp({ settings }, method, path, options))
}

/**
 * Calls a Worker built with other models and resource routes (e.g. the Posts example). Their routes come from
 * configuration: the body is a record unless the caller says otherwise (`ResourceRecord[]` for a list).
 */
export async function callWithResources<Body = ResourceRecord>(
  resources: ResourceConfig,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<JsonAnswer<Body>> {
  return readJson(await callBuiltApp({ resources }, method, path, options)) as Promise<JsonAnswer<Body>>
}

async function callBuiltApp(
  build: { settings?: Partial<Record<keyof Env, string>>; resources?: ResourceConfig },
  method: string,
  path: string,
  options: CallOptions,
): Promise<Response> {
  const { createApp } = await import('../../worker/app')
  const { env, createExecutionContext, waitOnExecutionContext } = await import('cloudflare:test')
  const ctx = createExecutionContext()
  const app = createApp({ resources: build.resources })
  const response = await app.fetch(requestFor(method, path, options), { ...env, ...build.settings }, ctx)
  await waitOnExecutionContext(ctx)
  return response
}
