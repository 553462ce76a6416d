// Drives the Worker through its own fetch handler in workerd, as a client would.
import { exports } from 'cloudflare:workers'
import type { ResourceConfig } from '../../worker/models/resources'
import { type CallOptions, requestFor } from './request'

export { BASE, type CallOptions, randomIp, requestFor } from './request'

/** A parsed answer: the status, the JSON body (undefined when there is none) and the headers. */
export interface JsonAnswer<Body> {
  status: number
  body: Body
  headers: Headers
}

export async function call(method: string, path: string, options: CallOptions = {}): Promise<Response> {
  return exports.default.fetch(requestFor(method, path, options))
}

/** Calls and parses the JSON body, returning both. */
export async function callJson<T = any>(
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<JsonAnswer<T>> {
  return readJson(await call(method, path, options)) as Promise<JsonAnswer<T>>
}

async function readJson(response: Response): Promise<JsonAnswer<unknown>> {
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers }
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

/**
 * Calls a Worker built with other models and resource routes (e.g. the Posts example). Their routes come from
 * configuration, so the body is what the caller says it is.
 */
export async function callWithResources<Body = any>(
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
