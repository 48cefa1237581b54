import type {
	ApiKeyRecord,
	Brand,
	BrandHealth,
	Category,
	Connection,
	Delivery,
	Forecast,
	Order,
	Product,
	PurchaseOrder,
	ReturnRecord,
	SaleChannel,
	User,
	WebhookEndpoint,
} from './model';
import { Prng } from './prng';

export type StoreSnapshot = Omit<
	Store,
	| 'rng'
	| 'keys'
	| 'counters'
	| 'snapshot'
	| 'nextId'
	| 'user'
	| 'order'
	| 'endpoint'
	| 'permissionsOf'
> & {
	keys: Array<[string, ApiKeyRecord]>;
	counters: Array<[string, number]>;
	rngPosition: number;
};

/** All mutable data of one sandbox instance (replaced wholesale on reset). */
export class Store {
	users: User[] = [];
	keys = new Map<string, ApiKeyRecord>();
	brands: Brand[] = [];
	categories: Category[] = [];
	products: Product[] = [];
	orders: Order[] = [];
	returns: ReturnRecord[] = [];
	purchaseOrders: PurchaseOrder[] = [];
	brandHealth: BrandHealth[] = [];
	forecasts: Forecast[] = [];
	saleChannels: SaleChannel[] = [];
	connections: Connection[] = [];
	endpoints: WebhookEndpoint[] = [];
	deliveries: Delivery[] = [];
	demoApiKey = '';
	/** virtual ms when the data was seeded */
	seededAt = 0;

	constructor(readonly rng: Prng) {}

	counters = new Map<string, number>();

	/** Next id of a kind; ids start at `start`. */
	nextId(kind: string, start = 1): number {
		const id = (this.counters.get(kind) ?? start - 1) + 1;
		this.counters.set(kind, id);
		return id;
	}

	user(id: number): User | undefined {
		return this.users.find((u) => u.id === id);
	}

	order(id: number): Order | undefined {
		return this.orders.find((o) => o.id === id);
	}

	endpoint(id: number): WebhookEndpoint | undefined {
		return this.endpoints.find((e) => e.id === id);
	}

	/** Everything as plain JSON (for the state file of a sandbox that outlives its process). */
	snapshot(): StoreSnapshot {
		const { rng, keys, counters, ...data } = this;
		return {
			...data,
			keys: [...keys.entries()],
			counters: [...counters.entries()],
			rngPosition: rng.position,
		};
	}

	static restore(snapshot: StoreSnapshot): Store {
		const { keys, counters, rngPosition, ...data } = snapshot;
		const store = Object.assign(new Store(new Prng(0)), data);
		store.rng.position = rngPosition;
		store.keys = new Map(keys);
		store.counters = new Map(counters);
		return store;
	}

	permissionsOf(key: ApiKeyRecord): Set<string> {
		return new Set(key.permissions ?? this.user(key.userId)?.permissions ?? []);
	}
}
